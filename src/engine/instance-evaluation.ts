// One evaluation of a TemplateInstance, the path shared by the operator and `stencil render`:
// resolve the Template, check the target namespace, resolve parameters, render, place and stamp
// the resources. Stops at the first failing step; the conditions say which and why.
import { InstanceConditionType as T, InstanceReason as R } from '../api/condition.ts';
import type { KubeObject } from '../api/object-meta.ts';
import type { SyncMode, Template } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import { draft, type ConditionDraft } from './conditions.ts';
import { sortForInstall, stampOwnership, waveProblem } from './inventory.ts';
import { resolveParameters, type ResolvedParameters } from './parameters.ts';
import { formatProblem, type Problem } from './problem.ts';
import { compileTemplate, renderTemplate, type RenderContext } from './render.ts';
import { Redactor } from './redaction.ts';
import { groupKind, kindsDeclaredBy, placeResources } from './resource-scope.ts';
import type { KindScope, SourcePort } from './source-port.ts';
import { targetNamespaceRefusal } from './target-namespaces.ts';

export interface InstanceInputs {
  instance: TemplateInstance;
  /** The referenced Template (at the revision the instance is on), or undefined when it does not exist. */
  template: Template | undefined;
  /** The pinned revision, when it does not exist (the Template does). */
  missingRevision?: number;
  /** Labels of the instance's namespace (for targetNamespaces.selector). */
  namespaceLabels: Record<string, string>;
  port: SourcePort;
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
  syncMode: SyncMode;
  /**
   * Hides Secret-backed values: every message of this evaluation already went through it, and
   * every message derived from its resources (API server errors, Events, logs) must too.
   */
  redactor: Redactor;
}

/** `templateRef` with its namespace defaulted to the instance's. */
export function templateRefOf(instance: TemplateInstance): { name: string; namespace: string } {
  return {
    name: instance.spec.templateRef.name,
    namespace: instance.spec.templateRef.namespace ?? instance.metadata.namespace ?? '',
  };
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
    syncMode,
    redactor,
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
  if (inputs.missingRevision !== undefined) {
    return failed(
      conditions,
      T.TemplateResolved,
      {
        path: 'spec.templateRef.revision',
        reason: R.RevisionNotFound,
        message: `revision ${inputs.missingRevision} of Template ${ref.namespace}/${ref.name} does not exist (see the Template's status.revisions for those kept)`,
      },
      syncMode,
    );
  }
  if (!template) {
    return failed(
      conditions,
      T.TemplateResolved,
      {
        path: 'spec.templateRef',
        reason: R.TemplateNotFound,
        message: `Template ${ref.namespace}/${ref.name} not found`,
      },
      syncMode,
    );
  }
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

  const resolved = await resolveParameters(template, instance, port);
  if (!resolved.ok) return failed(conditions, T.ParametersValid, resolved.problems[0]!, syncMode);
  const count = template.spec.parameters?.length ?? 0;
  conditions.push(
    draft(T.ParametersValid, true, R.AllParametersResolved, `${count} parameter(s) resolved`),
  );

  const rendered = await render(template, instance, resolved.value, port);
  if (!rendered.ok)
    return failed(conditions, T.Rendered, rendered.problem, syncMode, resolved.value);
  const owner = { name: instance.metadata.name ?? '', namespace, uid: instance.metadata.uid ?? '' };
  const resources = sortForInstall(rendered.objects.map((o) => stampOwnership(o, owner, syncMode)));
  conditions.push(draft(T.Rendered, true, R.Success, `rendered ${resources.length} resource(s)`));
  return {
    conditions: redacted(conditions, resolved.value.redactor),
    ok: true,
    resolved: resolved.value,
    resources,
    syncMode,
    redactor: resolved.value.redactor,
  };
}

type RenderResult = { ok: true; objects: KubeObject[] } | { ok: false; problem: Problem };

async function render(
  template: Template,
  instance: TemplateInstance,
  resolved: ResolvedParameters,
  port: SourcePort,
): Promise<RenderResult> {
  const asExecutionFailure = (p: Problem): Problem => ({ ...p, reason: R.TemplateExecutionFailed });
  const compiled = compileTemplate(
    template.spec.handlebars,
    (template.spec.parameters ?? []).map((p) => p.name),
  );
  if (!compiled.ok) return { ok: false, problem: asExecutionFailure(compiled.problems[0]!) };
  const documents = renderTemplate(compiled.value, renderContext(template, instance, resolved));
  if (!documents.ok) return { ok: false, problem: documents.problems[0]! };
  const objects = documents.value.map((d) => d.object);
  const known = await scopes(objects, port);
  const placed = placeResources(objects, {
    instanceNamespace: instance.metadata.namespace ?? '',
    spec: template.spec,
    scopeOf: (apiVersion, kind) => known.get(`${apiVersion}|${kind}`),
  });
  if (!placed.ok) return { ok: false, problem: placed.problems[0]! };
  const badWave = placed.value.map(waveProblem).find((p) => p !== undefined);
  if (badWave)
    return {
      ok: false,
      problem: { path: 'spec.handlebars', reason: R.TemplateExecutionFailed, message: badWave },
    };
  return { ok: true, objects: placed.value };
}
