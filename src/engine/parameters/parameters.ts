// Parameter resolution (SPEC §3): Template declarations × instance overrides × the objects that
// `valueFrom` reads, in declaration order and fail-fast, under the reference policy that keeps a
// consumer from reading, through the operator, what it could not read itself.
import { InstanceReason } from '../../api/condition.ts';
import type { JsonValue, KubeObject } from '../../api/object-meta.ts';
import type { ParameterDeclaration, SourceEntry, Template } from '../../api/template.ts';
import type {
  ObjectFieldRef,
  ParameterValue,
  ResolvedParameter,
  TemplateInstance,
  ValueSource,
} from '../../api/template-instance.ts';
import { evaluateJsonPath } from '../shared/jsonpath.ts';
import { coerceParameter, emptyValue } from './parameter-types.ts';
import { checkConstraints } from './parameter-constraints.ts';
import { failure, success, type Outcome, type Problem } from '../shared/problem.ts';
import { Redactor, type SecretValue } from '../redaction/redaction.ts';
import { selectorMatches } from '../shared/target-namespaces.ts';
import { mergeParameterValue } from './value-merge.ts';
import {
  describeRef,
  type ReadFailure,
  type ReadAccess,
  type SourcePort,
  type SourceRead,
} from '../sources/source-port.ts';

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

/**
 * Namespaces a `valueFrom` may read without naming each object (SPEC §3 reference policy, ADR
 * 0019): the instance's own, and spec.sourceNamespaces. The Template's own namespace is never one
 * of them (unless it is the instance's too), whatever sourceNamespaces says, "*" included: reads
 * there need the Template's spec.sources allow-list (see `isTemplateNamespaceRead`).
 */
export function isNamespacePermitted(
  namespace: string,
  template: Template,
  instance: TemplateInstance,
): boolean {
  if (namespace === instance.metadata.namespace) return true;
  if (isTemplateNamespaceRead(namespace, template, instance)) return false;
  const extra = template.spec.sourceNamespaces ?? [];
  return extra.includes('*') || extra.includes(namespace);
}

/** A read from the Template's namespace by an instance that lives elsewhere. */
export function isTemplateNamespaceRead(
  namespace: string | undefined,
  template: Template,
  instance: TemplateInstance,
): boolean {
  return (
    namespace !== undefined &&
    namespace === template.metadata.namespace &&
    namespace !== instance.metadata.namespace
  );
}

/** The spec.sources entries for one kind. */
function entriesFor(template: Template, apiVersion: string, kind: string): SourceEntry[] {
  return (template.spec.sources ?? []).filter(
    (e) => (e.apiVersion ?? 'v1') === apiVersion && e.kind === kind,
  );
}

/** Whether spec.sources lists this object (by name, or by a selector matching its labels). */
export function isListedSource(
  template: Template,
  object: { apiVersion: string; kind: string; name: string; labels?: Record<string, string> },
): boolean {
  return entriesFor(template, object.apiVersion, object.kind).some((e) =>
    e.name !== undefined
      ? e.name === object.name
      : e.selector !== undefined && selectorMatches(e.selector, object.labels ?? {}),
  );
}

function templateName(template: Template): string {
  return `${template.metadata.namespace ?? ''}/${template.metadata.name ?? ''}`;
}

function notListed(ctx: Context, what: string, entry: string): Refusal {
  return notPermitted(
    `${what} is in the namespace of the Template "${templateName(ctx.template)}", which lets instances in other namespaces read only the objects its spec.sources lists; add ${entry} to the Template's spec.sources to allow it`,
  );
}

type Refusal = Extract<SourceOutcome, { ok: false }>;

const notPermitted = (message: string): Refusal => ({
  ok: false,
  failure: 'Forbidden',
  message,
  reason: InstanceReason.ReferenceNotPermitted,
});

/** The requester check (when the port has one), after the Template's policy allowed the read. */
async function authorization(ctx: Context, access: ReadAccess): Promise<SourceOutcome | undefined> {
  const decision = await ctx.port.authorize?.(access);
  if (decision === undefined || decision.allowed) return undefined;
  return {
    ok: false,
    failure: 'Forbidden',
    message: decision.message,
    reason: InstanceReason.SourceNotAuthorized,
  };
}

/**
 * The policy for a read of one named object. `undefined`: read it. `labels`: read it, but it is
 * in the Template's namespace and only a spec.sources selector can list it, so its labels decide
 * before anything of it is used. Otherwise the refusal, and no request is sent.
 */
function namedPolicy(
  ctx: Context,
  ref: { apiVersion: string; kind: string; name: string; namespace: string },
  what: string,
): SourceOutcome | 'labels' | undefined {
  if (isTemplateNamespaceRead(ref.namespace, ctx.template, ctx.instance)) {
    if (isListedSource(ctx.template, ref)) return undefined;
    const bySelector = entriesFor(ctx.template, ref.apiVersion, ref.kind).some((e) => e.selector);
    if (bySelector) return 'labels';
    return notListed(ctx, what, entryText(ref));
  }
  if (isNamespacePermitted(ref.namespace, ctx.template, ctx.instance)) return undefined;
  return notPermitted(
    `${what} is in namespace "${ref.namespace}", which the Template does not permit (allowed: the instance's namespace, spec.sourceNamespaces, and the objects of the Template's own namespace that spec.sources lists)`,
  );
}

function entryText(ref: { apiVersion: string; kind: string; name: string }): string {
  const version = ref.apiVersion === 'v1' ? '' : `apiVersion: ${ref.apiVersion}, `;
  return `{${version}kind: ${ref.kind}, name: ${ref.name}}`;
}

/**
 * Reads one named source and records it. One that only a spec.sources selector can share (policy
 * `labels`) is recorded, and watched, only once its labels share it, and a missing one is refused
 * like an unshared one: nobody learns through an instance which names exist in the Template's
 * namespace, or when an object that is not shared changes (a SourceChanged event).
 */
async function readNamed(
  ctx: Context,
  target: { apiVersion: string; kind: string; name: string; namespace?: string },
  what: string,
  policy: 'labels' | undefined,
): Promise<SourceRead<KubeObject> | Refusal> {
  if (policy === undefined) {
    ctx.sources.push(target);
    return ctx.port.get(target);
  }
  const shared = (object: KubeObject): boolean =>
    isListedSource(ctx.template, { ...target, labels: object.metadata.labels });
  const read = await ctx.port.get(target, shared);
  const refusal = (): Refusal =>
    notListed(ctx, what, `${entryText(target)} (or labels its selector matches)`);
  if (!read.ok) return read.failure === 'NotFound' ? refusal() : read;
  if (!shared(read.value)) return refusal();
  ctx.sources.push(target);
  return read;
}

/** Strict UTF-8: bytes that are not text fail instead of becoming U+FFFD (ADR 0019). */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function asText(bytes: Buffer): string | undefined {
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

type Encoding = 'text' | 'base64';

/** One key of a Secret's data or a ConfigMap's data/binaryData, as the parameter's encoding says. */
function keyValue(
  kind: 'Secret' | 'ConfigMap',
  object: { data?: Record<string, unknown>; binaryData?: Record<string, unknown> },
  key: string,
  encoding: Encoding,
): { bytes: true; value: string } | { bytes: false; value: string | undefined } {
  const text = kind === 'ConfigMap' ? stringOrUndefined(ownValue(object.data, key)) : undefined;
  if (text !== undefined)
    return {
      bytes: true,
      value: encoding === 'base64' ? Buffer.from(text, 'utf8').toString('base64') : text,
    };
  const stored = stringOrUndefined(
    ownValue(kind === 'Secret' ? object.data : object.binaryData, key),
  );
  if (stored === undefined) return { bytes: false, value: undefined };
  if (encoding === 'base64') return { bytes: true, value: stored };
  return { bytes: false, value: asText(Buffer.from(stored, 'base64')) };
}

async function readKey(
  ctx: Context,
  kind: 'Secret' | 'ConfigMap',
  ref: { name: string; key: string; namespace?: string },
  encoding: Encoding,
): Promise<SourceOutcome> {
  const namespace = ref.namespace ?? ctx.instance.metadata.namespace ?? '';
  const what = describeRef({ kind, name: ref.name, namespace });
  const target = { apiVersion: 'v1', kind, name: ref.name, namespace };
  const policy = namedPolicy(ctx, target, what);
  if (policy !== undefined && policy !== 'labels') return policy;
  const unauthorized = await authorization(ctx, { verb: 'get', ...target });
  if (unauthorized) return unauthorized;
  const read = await readNamed(ctx, target, what, policy);
  if (!read.ok) return read;
  const object = read.value as {
    data?: Record<string, unknown>;
    binaryData?: Record<string, unknown>;
  };
  const found = keyValue(kind, object, ref.key, encoding);
  if (found.value !== undefined) return { ok: true, value: found.value, secret: kind === 'Secret' };
  const present =
    Object.hasOwn(object.data ?? {}, ref.key) || Object.hasOwn(object.binaryData ?? {}, ref.key);
  if (!present)
    return { ok: false, failure: 'NotFound', message: `key "${ref.key}" not found in ${what}` };
  return {
    ok: false,
    failure: 'Invalid',
    reason: InstanceReason.ParameterResolutionFailed,
    message: `key "${ref.key}" of ${what} holds bytes that are not UTF-8 text; declare encoding: base64 on the Template's parameter to receive them as base64 text`,
  };
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
  const target = { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name };
  const policy =
    namespace === undefined ? undefined : namedPolicy(ctx, { ...target, namespace }, what);
  if (policy !== undefined && policy !== 'labels') return policy;
  const unauthorized = await authorization(ctx, { verb: 'get', ...target, namespace });
  if (unauthorized) return unauthorized;
  const read = await readNamed(ctx, { ...target, namespace }, what, policy);
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
  if (isTemplateNamespaceRead(namespace, ctx.template, ctx.instance)) {
    if (!entriesFor(ctx.template, ref.apiVersion, ref.kind).some((e) => e.selector))
      return notPermitted(
        `the ${what} is in the namespace of the Template "${templateName(ctx.template)}", where instances in other namespaces may list only through a spec.sources entry with a selector; add {kind: ${ref.kind}, selector: ...} to the Template's spec.sources to allow it`,
      );
  } else if (
    namespace !== undefined &&
    !isNamespacePermitted(namespace, ctx.template, ctx.instance)
  ) {
    return notPermitted(
      `the ${what} is in namespace "${namespace}", which the Template does not permit (allowed: the instance's namespace, spec.sourceNamespaces, and the objects of the Template's own namespace that spec.sources lists)`,
    );
  }
  const access = { verb: 'list', apiVersion: ref.apiVersion, kind: ref.kind, namespace } as const;
  const unauthorized = await authorization(ctx, access);
  if (unauthorized) return unauthorized;
  ctx.sources.push({ apiVersion: ref.apiVersion, kind: ref.kind, namespace });
  const read = await ctx.port.list({ apiVersion: ref.apiVersion, kind: ref.kind, namespace });
  if (!read.ok) return read;
  // Of the Template's namespace, only the listed objects are read (a list across all namespaces
  // included); the rest are dropped before the JSONPath sees them.
  const items = read.value.items.filter(
    (item) =>
      !isTemplateNamespaceRead(item.metadata.namespace, ctx.template, ctx.instance) ||
      isListedSource(ctx.template, {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        name: item.metadata.name ?? '',
        labels: item.metadata.labels,
      }),
  );
  const matches = matchPath(ref.jsonPath, { ...read.value, items }, `the ${what}`);
  if (!matches.ok) return matches;
  return { ok: true, value: matches.value as JsonValue, secret };
}

function readSource(ctx: Context, source: ValueSource, encoding: Encoding): Promise<SourceOutcome> {
  if (source.secretKeyRef) return readKey(ctx, 'Secret', source.secretKeyRef, encoding);
  if (source.configMapKeyRef) return readKey(ctx, 'ConfigMap', source.configMapKeyRef, encoding);
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
  encoding: Encoding,
): Promise<Outcome<OverrideResult>> {
  if (!override.valueFrom)
    return success({ resolution: { value: override.value ?? null, secret: false } });
  const read = await readSource(ctx, override.valueFrom, encoding);
  if (read.ok) return success({ resolution: { value: read.value, secret: read.secret } });
  // A refusal (policy, bytes that are not text) is no missing source: no defaultValue stands in.
  if (read.reason !== undefined) {
    return failure([problem(read.reason, override.name, read.message)]);
  }
  if (override.defaultValue !== undefined) {
    return success({
      resolution: { value: override.defaultValue, secret: false },
      defaultUsed: { name: override.name, failure: read.failure, message: read.message },
    });
  }
  const failed = problem(InstanceReason.ParameterResolutionFailed, override.name, read.message);
  // A JSONPath the source's content refuses (too many matches): the same content, the same
  // answer; the source is watched, so its change brings the next pass.
  return failure([read.failure === 'Invalid' ? { ...failed, settled: true } : failed]);
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
    return resolveOverride(ctx, override, declaration.encoding ?? 'text');
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
 * A resolved value given its declared type, then held to the declaration's constraints (ADR
 * 0032): the Template default, a literal, a valueFrom read and a defaultValue alike. The empty
 * value of step 4 is neither: it stands for no value, as an absent field of a typed API does.
 */
function typedValue(
  declaration: ParameterDeclaration,
  value: JsonValue,
  secret: boolean,
): Outcome<JsonValue> {
  const typed = coerceParameter({ name: declaration.name, type: declaration.type, value, secret });
  return typed.ok ? checkConstraints({ declaration, value: typed.value, secret }) : typed;
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
      : typedValue(declaration, resolution.value, resolution.secret);
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
