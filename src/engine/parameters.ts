// Parameter resolution (SPEC §3): Template declarations × instance overrides × the objects that
// `valueFrom` reads, in declaration order and fail-fast, under the reference policy that keeps a
// consumer from reading, through the operator, what it could not read itself.
import { InstanceReason } from '../api/condition.ts';
import type { JsonValue } from '../api/object-meta.ts';
import type { ParameterDeclaration, Template } from '../api/template.ts';
import type {
  ObjectFieldRef,
  ParameterValue,
  ResolvedParameter,
  TemplateInstance,
  ValueSource,
} from '../api/template-instance.ts';
import { evaluateJsonPath } from './jsonpath.ts';
import { coerceParameter, emptyValue } from './parameter-types.ts';
import { failure, success, type Outcome, type Problem } from './problem.ts';
import { Redactor, type SecretValue } from './redaction.ts';
import { mergeParameterValue } from './value-merge.ts';
import { describeRef, type ReadFailure, type SourcePort, type SourceRead } from './source-port.ts';

/** A source read during resolution, for the watch registry and for messages. */
export interface SourceReference {
  apiVersion: string;
  kind: string;
  namespace?: string;
  /** Absent for LIST mode. */
  name?: string;
}

export interface DefaultUsed {
  name: string;
  failure: ReadFailure;
  /** Why the source failed (never contains a Secret value). */
  message: string;
}

export interface ResolvedParameters {
  /** Typed values for the render context, keyed by parameter name. */
  values: Record<string, JsonValue>;
  /** `status.resolvedParameters`: the source of each parameter; value only if exposed. */
  status: ResolvedParameter[];
  defaultsUsed: DefaultUsed[];
  /** A defaultValue stood in for a read that failed transiently: do not prune this time. */
  transientFallback: boolean;
  sources: SourceReference[];
  /** Hides the Secret-backed values in any message derived from this resolution. */
  redactor: Redactor;
  /** The parameters whose value derives from a Secret, whose provenance the render tracks. */
  secretParameters: string[];
}

interface Resolution {
  value: JsonValue;
  /** The value came from a Secret (never quote it; never expose it). */
  secret: boolean;
  /** The empty value of step 4: typed as declared without being checked against the type. */
  empty?: boolean;
}

type SourceOutcome =
  | { ok: true; value: JsonValue; secret: boolean }
  | { ok: false; failure: ReadFailure; message: string; reason?: string };

interface Context {
  template: Template;
  instance: TemplateInstance;
  port: SourcePort;
  sources: SourceReference[];
}

function problem(reason: string, name: string, message: string): Problem {
  return { path: `parameters.${name}`, reason, message: `parameter "${name}": ${message}` };
}

/** Namespaces a `valueFrom` may read (SPEC §3 reference policy). */
export function isNamespacePermitted(
  namespace: string,
  template: Template,
  instance: TemplateInstance,
): boolean {
  const extra = template.spec.sourceNamespaces ?? [];
  return (
    namespace === instance.metadata.namespace ||
    namespace === template.metadata.namespace ||
    extra.includes('*') ||
    extra.includes(namespace)
  );
}

const notPermitted = (message: string): SourceOutcome => ({
  ok: false,
  failure: 'Forbidden',
  message,
  reason: InstanceReason.ReferenceNotPermitted,
});

function policyFailure(ctx: Context, namespace: string, what: string): SourceOutcome | undefined {
  if (isNamespacePermitted(namespace, ctx.template, ctx.instance)) return undefined;
  return notPermitted(
    `${what} is in namespace "${namespace}", which the Template does not permit (allowed: the instance's namespace, the Template's namespace, and spec.sourceNamespaces)`,
  );
}

function decodeBase64(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  return Buffer.from(text, 'base64').toString('utf8');
}

async function readKey(
  ctx: Context,
  kind: 'Secret' | 'ConfigMap',
  ref: { name: string; key: string; namespace?: string },
): Promise<SourceOutcome> {
  const namespace = ref.namespace ?? ctx.instance.metadata.namespace ?? '';
  const what = describeRef({ kind, name: ref.name, namespace });
  const denied = policyFailure(ctx, namespace, what);
  if (denied) return denied;
  ctx.sources.push({ apiVersion: 'v1', kind, namespace, name: ref.name });
  const read = await ctx.port.get({ apiVersion: 'v1', kind, name: ref.name, namespace });
  if (!read.ok) return read;
  const object = read.value as {
    data?: Record<string, unknown>;
    binaryData?: Record<string, unknown>;
  };
  const value =
    kind === 'Secret'
      ? decodeBase64(ownValue(object.data, ref.key))
      : (stringOrUndefined(ownValue(object.data, ref.key)) ??
        decodeBase64(ownValue(object.binaryData, ref.key)));
  if (value === undefined)
    return { ok: false, failure: 'NotFound', message: `key "${ref.key}" not found in ${what}` };
  return { ok: true, value, secret: kind === 'Secret' };
}

function ownValue(map: Record<string, unknown> | undefined, key: string): unknown {
  return map && Object.hasOwn(map, key) ? map[key] : undefined;
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

async function readField(ctx: Context, ref: ObjectFieldRef): Promise<SourceOutcome> {
  const scope = await ctx.port.scopeOf(ref.apiVersion, ref.kind);
  if (scope === undefined) {
    return {
      ok: false,
      failure: 'NotServed',
      message: `kind ${ref.kind} (${ref.apiVersion}) is not served by the API server (is its CRD installed?)`,
    };
  }
  const secret = ref.kind === 'Secret' && ref.apiVersion === 'v1';
  return ref.name === undefined
    ? readList(ctx, ref, scope === 'Namespaced', secret)
    : readOne(ctx, { ...ref, name: ref.name }, scope === 'Namespaced', secret);
}

async function readOne(
  ctx: Context,
  ref: ObjectFieldRef & { name: string },
  namespaced: boolean,
  secret: boolean,
): Promise<SourceOutcome> {
  const namespace = namespaced
    ? (ref.namespace ?? ctx.instance.metadata.namespace ?? '')
    : undefined;
  const what = describeRef({ kind: ref.kind, name: ref.name, namespace });
  if (namespace !== undefined) {
    const denied = policyFailure(ctx, namespace, what);
    if (denied) return denied;
  }
  ctx.sources.push({ apiVersion: ref.apiVersion, kind: ref.kind, namespace, name: ref.name });
  const read = await ctx.port.get({
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    name: ref.name,
    namespace,
  });
  if (!read.ok) return read;
  const matches = matchPath(ref.jsonPath, read.value, what);
  if (!matches.ok) return matches;
  const value = (matches.value.length === 1 ? matches.value[0] : matches.value) as JsonValue;
  return { ok: true, value, secret };
}

/** Every match of a JSONPath; no match at all is a failure (SPEC §3, GET and LIST alike). */
function matchPath(
  jsonPath: string,
  root: unknown,
  what: string,
): { ok: true; value: unknown[] } | { ok: false; failure: ReadFailure; message: string } {
  const matches = evaluateJsonPath(jsonPath, root);
  if (!matches.ok)
    return {
      ok: false,
      failure: 'Invalid',
      message: matches.problems.map((p) => p.message).join('; '),
    };
  if (matches.value.length === 0)
    return {
      ok: false,
      failure: 'NotFound',
      message: `jsonPath ${jsonPath} matched nothing in ${what}`,
    };
  return matches;
}

async function readList(
  ctx: Context,
  ref: ObjectFieldRef,
  namespaced: boolean,
  secret: boolean,
): Promise<SourceOutcome> {
  const namespace = namespaced ? ref.namespace : undefined;
  if (
    namespaced &&
    namespace === undefined &&
    !(ctx.template.spec.sourceNamespaces ?? []).includes('*')
  ) {
    return notPermitted(
      `listing ${ref.kind} across all namespaces requires "*" in the Template's spec.sourceNamespaces`,
    );
  }
  const what = `${ref.kind} list${namespace ? ` in ${namespace}` : ''}`;
  if (namespace !== undefined) {
    const denied = policyFailure(ctx, namespace, what);
    if (denied) return denied;
  }
  ctx.sources.push({ apiVersion: ref.apiVersion, kind: ref.kind, namespace });
  const read = await ctx.port.list({ apiVersion: ref.apiVersion, kind: ref.kind, namespace });
  if (!read.ok) return read;
  const matches = matchPath(ref.jsonPath, read.value, `the ${what}`);
  if (!matches.ok) return matches;
  return { ok: true, value: matches.value as JsonValue, secret };
}

function readSource(ctx: Context, source: ValueSource): Promise<SourceOutcome> {
  if (source.secretKeyRef) return readKey(ctx, 'Secret', source.secretKeyRef);
  if (source.configMapKeyRef) return readKey(ctx, 'ConfigMap', source.configMapKeyRef);
  if (source.objectFieldRef) return readField(ctx, source.objectFieldRef);
  return Promise.resolve({ ok: false, failure: 'Invalid', message: 'valueFrom names no source' });
}

interface OverrideResult {
  resolution: Resolution;
  defaultUsed?: DefaultUsed;
}

async function resolveOverride(
  ctx: Context,
  override: ParameterValue,
): Promise<Outcome<OverrideResult>> {
  if (!override.valueFrom)
    return success({ resolution: { value: override.value ?? null, secret: false } });
  const read = await readSource(ctx, override.valueFrom);
  if (read.ok) return success({ resolution: { value: read.value, secret: read.secret } });
  if (read.reason === InstanceReason.ReferenceNotPermitted) {
    return failure([problem(InstanceReason.ReferenceNotPermitted, override.name, read.message)]);
  }
  if (override.defaultValue !== undefined) {
    return success({
      resolution: { value: override.defaultValue, secret: false },
      defaultUsed: { name: override.name, failure: read.failure, message: read.message },
    });
  }
  return failure([problem(InstanceReason.ParameterResolutionFailed, override.name, read.message)]);
}

function statusEntry(
  declaration: ParameterDeclaration,
  override: ParameterValue | undefined,
  resolution: Resolution,
): ResolvedParameter {
  const entry: ResolvedParameter = { name: declaration.name };
  if (declaration.exposeInStatus && !resolution.secret) entry.value = resolution.value;
  if (override?.valueFrom) entry.valueFrom = override.valueFrom;
  return entry;
}

async function resolveOne(
  ctx: Context,
  declaration: ParameterDeclaration,
  override: ParameterValue | undefined,
): Promise<Outcome<OverrideResult>> {
  const name = declaration.name;
  if (override) {
    if (declaration.disableOverride) {
      return failure([
        problem(
          InstanceReason.OverrideNotAllowed,
          name,
          'the Template does not allow overriding it (disableOverride)',
        ),
      ]);
    }
    return resolveOverride(ctx, override);
  }
  if (declaration.required) {
    return failure([
      problem(
        InstanceReason.InvalidParameter,
        name,
        'is required: the instance must set it (the Template default does not apply)',
      ),
    ]);
  }
  if (declaration.value !== undefined)
    return success({ resolution: { value: declaration.value, secret: false } });
  return success({
    resolution: { value: emptyValue(declaration.type), secret: false, empty: true },
  });
}

/**
 * The instance's typed value combined with the Template default as `merge` says (ADR 0013). No
 * merge for `replace`, without a default, or for a `required` parameter, whose default never
 * applies (SPEC §3 step 2).
 */
function mergeWithDefault(
  declaration: ParameterDeclaration,
  value: JsonValue,
  secret: boolean,
): Outcome<JsonValue> {
  const strategy = declaration.merge ?? 'replace';
  if (strategy === 'replace' || declaration.value === undefined || declaration.required)
    return success(value);
  const base = coerceParameter({
    name: declaration.name,
    type: declaration.type,
    value: declaration.value,
    secret: false,
  });
  if (!base.ok) return base;
  return mergeParameterValue({
    name: declaration.name,
    strategy,
    mergeKey: declaration.mergeKey,
    base: base.value,
    override: value,
    secret,
  });
}

function rejectUnknown(template: Template, instance: TemplateInstance): Problem | undefined {
  const declared = new Set((template.spec.parameters ?? []).map((p) => p.name));
  const unknown = (instance.spec.parameters ?? []).find((p) => !declared.has(p.name));
  if (!unknown) return undefined;
  return problem(
    InstanceReason.InvalidParameter,
    unknown.name,
    `the Template "${template.metadata.name ?? ''}" declares no such parameter`,
  );
}

/**
 * Resolves every declared parameter (SPEC §3); the first failure in declaration order is the one
 * reported. Requests go through `port`, and only for sources the reference policy permits; they
 * are sent together (reads have no effect, and one round trip per source would make a pass as
 * slow as its sources are many).
 */
export async function resolveParameters(
  template: Template,
  instance: TemplateInstance,
  port: SourcePort,
): Promise<Outcome<ResolvedParameters>> {
  const unknown = rejectUnknown(template, instance);
  if (unknown) return failure([unknown]);
  const ctx: Context = { template, instance, port, sources: [] };
  const overrides = new Map((instance.spec.parameters ?? []).map((p) => [p.name, p]));
  const result: ResolvedParameters = {
    values: {},
    status: [],
    defaultsUsed: [],
    transientFallback: false,
    sources: ctx.sources,
    redactor: Redactor.none,
    secretParameters: [],
  };
  const secrets: SecretValue[] = [];
  const declarations = template.spec.parameters ?? [];
  const resolutions = await Promise.all(
    declarations.map((d) => resolveOne(ctx, d, overrides.get(d.name))),
  );
  for (const [index, declaration] of declarations.entries()) {
    const override = overrides.get(declaration.name);
    const resolved = resolutions[index]!;
    if (!resolved.ok) return resolved;
    const { resolution, defaultUsed } = resolved.value;
    const typed = resolution.empty
      ? success(resolution.value)
      : coerceParameter({
          name: declaration.name,
          type: declaration.type,
          value: resolution.value,
          secret: resolution.secret,
        });
    if (!typed.ok) return typed;
    const merged = override ? mergeWithDefault(declaration, typed.value, resolution.secret) : typed;
    if (!merged.ok) return merged;
    if (resolution.secret) {
      // Both forms: a message may quote the text as read ("TRUE") or as typed (true).
      secrets.push({ name: declaration.name, value: resolution.value });
      secrets.push({ name: declaration.name, value: typed.value });
      result.secretParameters.push(declaration.name);
    }
    Object.defineProperty(result.values, declaration.name, {
      value: merged.value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
    // A merged value with Secret-derived parts stays Secret-backed as a whole: never exposed,
    // and its Secret leaves (pushed above) redacted wherever they appear.
    result.status.push(statusEntry(declaration, override, { ...resolution, value: merged.value }));
    if (defaultUsed) {
      result.defaultsUsed.push(defaultUsed);
      if (defaultUsed.failure === 'Transient') result.transientFallback = true;
    }
  }
  result.redactor = Redactor.of(secrets);
  return success(result);
}

export type { SourceRead };
