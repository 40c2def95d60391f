// One evaluation of a TemplateInstance, the path shared by the operator and `stencil render`:
// resolve the Template, check the target namespace, resolve parameters, render, place and stamp
// the resources. Stops at the first failing step; the conditions say which and why.
import { InstanceConditionType as T, InstanceReason as R } from '../../api/condition.ts';
import type { KubeObject } from '../../api/object-meta.ts';
import type { SyncMode, Template } from '../../api/template.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import { draft, type ConditionDraft } from '../shared/conditions.ts';
import { renderedObjectProblem } from '../objects/annotation-checks.ts';
import { instanceOwner, sortForInstall, stampOwnership } from '../objects/inventory.ts';
import {
  observedPlacementProblems,
  observedWait,
  type ObservedCall,
  type ObservedInput,
} from '../health/observed.ts';
import { expiryOf, ttlRefusal } from './expiry.ts';
import {
  migrateObjectNames,
  migrateParameters,
  pendingMigrationMessage,
  pendingSecretMigrations,
  type PendingSecretMigration,
} from '../releases/migrations.ts';
import { stampSourcesHash } from '../sync/restart-on-change.ts';
import { resolveParameters, type ResolvedParameters } from '../parameters/parameters.ts';
import {
  formatProblem,
  success,
  summarizeProblems,
  type Outcome,
  type Problem,
} from '../shared/problem.ts';
import { compileTemplate, type RenderContext, type RenderedDocument } from '../render/render.ts';
import type { ObjectSchemas } from '../object-schema/object-schema.ts';
import { objectSchemaProblems } from './schema-checks.ts';
import { producerKey, renderInProcess, type RenderRunner } from '../render/render-job.ts';
import { Redactor, type TaintedTexts } from '../redaction/redaction.ts';
import { groupKind, kindsDeclaredBy, placeResources } from '../objects/resource-scope.ts';
import type { KindScope, ObjectRef, SourcePort } from '../sources/source-port.ts';
import { targetNamespaceRefusal } from '../shared/target-namespaces.ts';
import {
  actingIdentity,
  formatServiceAccount,
  type TenancyPolicy,
} from '../shared/acting-identity.ts';
import { templateRefOf } from '../shared/template-ref.ts';

export interface InstanceInputs {
  instance: TemplateInstance;
  /** The referenced Template (at the revision the instance is on), or undefined when it does not exist. */
  template: Template | undefined;
  /** The pinned revision, when it does not exist (the Template does). */
  missingRevision?: number;
  /** Labels of the instance's namespace (for targetNamespaces.selector). */
  namespaceLabels: Record<string, string>;
  port: SourcePort;
  /**
   * Reads a producer that `observed` names (in the instance's namespace, none for a
   * cluster-scoped kind): the live object, or undefined when it is not there. The operator
   * accepts only objects this instance applied; without it, every observed read is missing.
   */
  observe?: (ref: ObjectRef) => Promise<KubeObject | undefined>;
  /** Where the render runs: the operator's worker pool (with a deadline), else this thread. */
  renderer?: RenderRunner;
  /**
   * The schemas the rendered objects are checked against before anything is applied (issue
   * #26); without them, only the API server's dry run checks them.
   */
  schemas?: ObjectSchemas;
  /**
   * Who the Template's requests are made as (ADR 0035). Absent (the CLI): no one to check; the
   * operator passes its policy, and a Template it cannot act for is refused here.
   */
  tenancy?: TenancyPolicy;
}

export interface InstanceEvaluation {
  /** The conditions evaluated, in order, up to and including the first failure. */
  conditions: ConditionDraft[];
  ok: boolean;
  /** The first failure, when not ok. */
  problem?: Problem;
  resolved?: ResolvedParameters;
  /** Placed, stamped and in install order; empty unless ok. */
  resources: KubeObject[];
  /** Aligned with `resources`: what each read with `observed`. */
  observed: ObservedInput[][];
  /**
   * Aligned with `resources`: why the object must not be applied yet (an `observed` input is
   * not there, or its JSONPath matched nothing), or undefined.
   */
  waits: (string | undefined)[];
  syncMode: SyncMode;
  /**
   * Hides Secret-backed values: every message of this evaluation already went through it, and
   * every message derived from its resources (API server errors, Events, logs) must too.
   */
  redactor: Redactor;
  /** What the schema check did not check: one line per kind without a schema, and why. */
  notes: string[];
  /** The ServiceAccount (`namespace/name`) the Template acts as, when it acts as one. */
  actingAs?: string;
}

function renderContext(
  template: Template,
  instance: TemplateInstance,
  resolved: ResolvedParameters,
): RenderContext {
  return {
    parameters: resolved.values,
    instance: {
      name: instance.metadata.name ?? '',
      namespace: instance.metadata.namespace ?? '',
      uid: instance.metadata.uid ?? '',
      labels: { ...(instance.metadata.labels ?? {}) },
      annotations: { ...(instance.metadata.annotations ?? {}) },
    },
    template: {
      name: template.metadata.name ?? '',
      namespace: template.metadata.namespace ?? '',
      generation: template.metadata.generation ?? 0,
    },
  };
}

function failed(
  conditions: ConditionDraft[],
  type: string,
  problem: Problem,
  syncMode: SyncMode,
  resolved?: ResolvedParameters,
): InstanceEvaluation {
  const redactor = resolved?.redactor ?? Redactor.none;
  const shown = redactor.redactProblem(problem);
  conditions.push(draft(type, false, shown.reason, formatProblem(shown)));
  return {
    conditions: redacted(conditions, redactor),
    ok: false,
    problem: shown,
    resolved,
    resources: [],
    observed: [],
    waits: [],
    syncMode,
    redactor,
    notes: [],
  };
}

/** Every message, not just the failing one: none may show a Secret, even by coincidence. */
function redacted(conditions: ConditionDraft[], redactor: Redactor): ConditionDraft[] {
  if (!redactor.active) return conditions;
  return conditions.map((c) => ({ ...c, message: redactor.redact(c.message) }));
}

/**
 * The scope of every kind the render uses: from the API server (or the offline table), else
 * from a CRD the same render installs (its resources are applied once it is served).
 */
async function scopes(
  objects: KubeObject[],
  port: SourcePort,
): Promise<Map<string, KindScope | undefined>> {
  const declared = kindsDeclaredBy(objects);
  const result = new Map<string, KindScope | undefined>();
  for (const o of objects) {
    const key = `${o.apiVersion}|${o.kind}`;
    if (result.has(key)) continue;
    const served = await port.scopeOf(o.apiVersion, o.kind);
    result.set(key, served ?? declared.get(groupKind(o.apiVersion, o.kind)));
  }
  return result;
}

/** Evaluates an instance against its Template; performs reads only through `inputs.port`. */
export async function evaluateInstance(inputs: InstanceInputs): Promise<InstanceEvaluation> {
  const { instance, template, port } = inputs;
  const conditions: ConditionDraft[] = [];
  const ref = templateRefOf(instance);
  const syncMode: SyncMode = template?.spec.sync?.mode ?? 'off';
  const unresolved = unresolvedTemplate(inputs, ref);
  if (unresolved || !template)
    return failed(conditions, T.TemplateResolved, unresolved ?? templateNotFound(ref), syncMode);
  conditions.push(
    draft(
      T.TemplateResolved,
      true,
      R.Success,
      `Template ${ref.namespace}/${ref.name} (generation ${template.metadata.generation ?? 0})`,
    ),
  );

  const namespace = instance.metadata.namespace ?? '';
  const refusal = targetNamespaceRefusal(template, namespace, inputs.namespaceLabels);
  if (refusal)
    return failed(
      conditions,
      T.TargetNamespaceAllowed,
      { path: 'metadata.namespace', reason: R.NamespaceNotPermitted, message: refusal },
      syncMode,
    );
  conditions.push(
    draft(
      T.TargetNamespaceAllowed,
      true,
      R.Success,
      `namespace "${namespace}" may use this Template`,
    ),
  );

  const lifetime = lifetimeProblem(template, instance);
  if (lifetime) return failed(conditions, T.ParametersValid, lifetime, syncMode);

  // A revision's migrations: old parameter names still supply values (ADR 0012).
  const migrated = migrateParameters(instance, template);
  const resolved = await resolveParameters(template, migrated, port);
  if (!resolved.ok) return failed(conditions, T.ParametersValid, resolved.problems[0]!, syncMode);
  conditions.push(parametersResolved(template, pendingSecretMigrations(instance, template)));

  const rendered = await render(template, instance, resolved.value, inputs).catch(
    (error: unknown) => {
      // Secret data is in hand from here: nothing thrown may carry it (the queue logs errors).
      throw resolved.value.redactor.redactError(error);
    },
  );
  // From here on, messages may quote what the render computed from Secret data too.
  const redactor = resolved.value.redactor.including(rendered.tainted);
  const parameters: ResolvedParameters = { ...resolved.value, redactor };
  if (!rendered.ok) return failed(conditions, T.Rendered, rendered.problem, syncMode, parameters);
  const placed = placeRendered(rendered, template, instance, syncMode, parameters);
  if (!placed.ok) return failed(conditions, T.Rendered, placed.problems[0]!, syncMode, parameters);
  const { resources, observed } = placed.value;
  const { notes } = rendered;
  conditions.push(draft(T.Rendered, true, R.Success, `rendered ${resources.length} resource(s)`));
  return {
    ...actingAsOf(template, inputs.tenancy),
    conditions: redacted(conditions, redactor),
    ok: true,
    resolved: parameters,
    resources,
    observed,
    waits: resources.map((o, i) => observedWait(o, observed[i]!, resources, namespace)),
    syncMode,
    redactor,
    notes,
  };
}

/**
 * The rendered objects as they are applied: migrated names, ownership stamped, workloads that
 * opted in stamped with the hash of what they consume (restart-on-change, so their pods roll
 * when it changes), in install order, each with the `observed` reads it made.
 */
function placeRendered(
  rendered: { objects: KubeObject[]; observed: ObservedInput[][] },
  template: Template,
  instance: TemplateInstance,
  syncMode: SyncMode,
  resolved: ResolvedParameters,
): Outcome<{ resources: KubeObject[]; observed: ObservedInput[][] }> {
  const { uid = '' } = instance.metadata;
  const kept = migrateObjectNames(rendered.objects, template, instance);
  const hashed = stampSourcesHash(kept, resolved, uid);
  if (!hashed.ok) return hashed;
  const owner = instanceOwner(instance);
  const stamped = hashed.value.map((o) => stampOwnership(o, owner, syncMode));
  const position = new Map(stamped.map((o, i) => [o, i]));
  const resources = sortForInstall(stamped);
  return success({
    resources,
    observed: resources.map((o) => rendered.observed[position.get(o)!] ?? []),
  });
}

/**
 * The producers the body's `observed` calls name, read once each before the render (the
 * render itself is synchronous and pure).
 */
async function readProducers(
  calls: readonly ObservedCall[],
  namespace: string,
  inputs: InstanceInputs,
): Promise<Map<string, KubeObject | undefined>> {
  const producers = new Map<string, KubeObject | undefined>();
  for (const call of calls) {
    const key = producerKey(call);
    if (producers.has(key) || !inputs.observe) continue;
    const scope = await inputs.port.scopeOf(call.apiVersion, call.kind);
    // A kind not served yet (its CRD is in an earlier wave) has no producer yet.
    const object =
      scope === undefined
        ? undefined
        : await inputs.observe({
            apiVersion: call.apiVersion,
            kind: call.kind,
            name: call.name,
            ...(scope === 'Namespaced' ? { namespace } : {}),
          });
    producers.set(key, object);
  }
  return producers;
}

type RenderResult = (
  | { ok: true; objects: KubeObject[]; observed: ObservedInput[][]; notes: string[] }
  | { ok: false; problem: Problem }
) & { tainted: TaintedTexts };

/** The schema problems of the placed objects, as one problem naming the first few. */
function schemaCheck(
  objects: KubeObject[],
  documents: readonly RenderedDocument[],
  schemas: ObjectSchemas | undefined,
): { problem?: Problem; notes: string[] } {
  if (!schemas) return { notes: [] };
  const rendered = objects.map((object, i) => ({ object, origins: documents[i]!.origins }));
  const { problems, notes } = objectSchemaProblems(rendered, schemas, R.InvalidResource);
  if (problems.length === 0) return { notes };
  const message = summarizeProblems(problems);
  return { problem: { path: '', reason: R.InvalidResource, message }, notes };
}

const NOTHING_TAINTED: TaintedTexts = new Map();

async function render(
  template: Template,
  instance: TemplateInstance,
  resolved: ResolvedParameters,
  inputs: InstanceInputs,
): Promise<RenderResult> {
  const { port } = inputs;
  const asExecutionFailure = (p: Problem): Problem => ({ ...p, reason: R.TemplateExecutionFailed });
  const compiled = compileTemplate(
    template.spec.handlebars,
    (template.spec.parameters ?? []).map((p) => p.name),
  );
  if (!compiled.ok)
    return {
      ok: false,
      problem: asExecutionFailure(compiled.problems[0]!),
      tainted: NOTHING_TAINTED,
    };
  const namespace = instance.metadata.namespace ?? '';
  const producers = await readProducers(compiled.value.observed, namespace, inputs);
  const documents = await (inputs.renderer ?? renderInProcess)({
    template: `${template.metadata.namespace ?? ''}/${template.metadata.name ?? ''}`,
    body: template.spec.handlebars,
    parameters: (template.spec.parameters ?? []).map((p) => p.name),
    context: renderContext(template, instance, resolved),
    producers,
    secret: resolved.secretParameters,
  });
  const { tainted } = documents;
  if (!documents.ok) return { ok: false, problem: documents.problems[0]!, tainted };
  const objects = documents.value.map((d) => d.object);
  const known = await scopes(objects, port);
  const placed = placeResources(objects, {
    instanceNamespace: instance.metadata.namespace ?? '',
    spec: template.spec,
    scopeOf: (apiVersion, kind) => known.get(`${apiVersion}|${kind}`),
  });
  if (!placed.ok) return { ok: false, problem: placed.problems[0]!, tainted };
  const badWave = placed.value.map(renderedObjectProblem).find((p) => p !== undefined);
  if (badWave)
    return {
      ok: false,
      problem: { path: 'spec.handlebars', reason: R.TemplateExecutionFailed, message: badWave },
      tainted,
    };
  const observed = documents.value.map((d) => d.observed);
  const misplaced = observedPlacementProblems(placed.value, observed, namespace);
  if (misplaced.length > 0) return { ok: false, problem: misplaced[0]!, tainted };
  await inputs.schemas?.prepare(placed.value);
  const checked = schemaCheck(placed.value, documents.value, inputs.schemas);
  if (checked.problem) return { ok: false, problem: checked.problem, tainted };
  return { ok: true, objects: placed.value, observed, tainted, notes: checked.notes };
}

/** An unreadable lifetime, or one the Template refuses (maxTTL, requireTTL). */
function lifetimeProblem(template: Template, instance: TemplateInstance): Problem | undefined {
  const expiry = expiryOf(instance);
  if (!expiry.ok) return expiry.problems[0];
  const refusal = ttlRefusal(template, instance, expiry.value);
  return refusal.ok ? undefined : refusal.problems[0];
}

/** A pinned revision that does not exist, or a Template that does not. */
function unresolvedTemplate(
  inputs: InstanceInputs,
  ref: { name: string; namespace: string },
): Problem | undefined {
  if (inputs.missingRevision !== undefined)
    return {
      path: 'spec.templateRef.revision',
      reason: R.RevisionNotFound,
      message: `revision ${inputs.missingRevision} of Template ${ref.namespace}/${ref.name} does not exist (see the Template's status.revisions for those kept)`,
    };
  if (!inputs.template) return templateNotFound(ref);
  const identity = inputs.tenancy && actingIdentity(inputs.template, inputs.tenancy);
  return identity && !identity.ok ? identity.problem : undefined;
}

/** The ServiceAccount (`namespace/name`) `template` acts as, if it acts as one. */
function actingAsOf(
  template: Template,
  tenancy: TenancyPolicy | undefined,
): Pick<InstanceEvaluation, 'actingAs'> {
  const identity = tenancy && actingIdentity(template, tenancy);
  return identity?.ok && identity.serviceAccount
    ? { actingAs: formatServiceAccount(identity.serviceAccount) }
    : {};
}

function templateNotFound(ref: { name: string; namespace: string }): Problem {
  return {
    path: 'spec.templateRef',
    reason: R.TemplateNotFound,
    message: `Template ${ref.namespace}/${ref.name} not found`,
  };
}

function parametersResolved(
  template: Template,
  pending: PendingSecretMigration[] = [],
): ConditionDraft {
  const count = template.spec.parameters?.length ?? 0;
  const waiting = pending.map((p) => `; ${pendingMigrationMessage(p)}`).join('');
  return draft(
    T.ParametersValid,
    true,
    R.AllParametersResolved,
    `${count} parameter(s) resolved${waiting}`,
  );
}
