// TemplateInstanceSet (ADR 0014), the pure part: which namespaces get an instance, the instance
// each one gets (parameter precedence: Template default < the Set's parameters < the namespace's
// labels/annotations < a ConfigMap in the namespace), what to write, delete or release, and the
// Set's status. The reconciler gathers the inputs from its caches and acts on the plan.
import type { JsonValue, LabelSelector, OwnerReference } from '../../api/object-meta.ts';
import type { Template } from '../../api/template.ts';
import type { ParameterValue, TemplateInstance } from '../../api/template-instance.ts';
import {
  InstanceSetConditionType,
  InstanceSetReason,
  MAX_FAILING_LISTED,
  NamespaceFailureReason,
  type FailingNamespace,
  type TemplateInstanceSet,
  type TemplateInstanceSetStatus,
} from '../../api/template-instance-set.ts';
import {
  ANNOTATION_REQUESTER,
  API_VERSION,
  LABEL_INSTANCE_SET,
  PARAMETER_OVERRIDE_PREFIX,
  TEMPLATE_INSTANCE_KIND,
  TEMPLATE_INSTANCE_SET_KIND,
} from '../../api/well-known.ts';
import { draft, type ConditionDraft } from '../shared/conditions.ts';
import { canonicalJson } from '../shared/canonical-json.ts';
import { coerceParameter, emptyValue } from '../parameters/parameter-types.ts';
import { selectorMatches, targetNamespaceRefusal } from '../shared/target-namespaces.ts';

/** What the Set needs of a namespace: its name, labels and override annotations. */
export interface NamespaceView {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  terminating?: boolean;
}

/** The inputs of one pass over a Set. */
export interface SetInputs {
  set: TemplateInstanceSet;
  /** The referenced Template; undefined when it does not exist. */
  template: Template | undefined;
  /** Every namespace this operator manages (watched), whatever its labels. */
  namespaces: NamespaceView[];
  /** The instances labelled as stamped by this Set, anywhere. */
  stamped: TemplateInstance[];
  /** The instance named `name` in `namespace`, whoever made it (for the conflict check). */
  existing: (namespace: string, name: string) => TemplateInstance | undefined;
}

/** What one pass does: applies (server-side), removals (delete or release), and the status. */
export interface SetPlan {
  apply: TemplateInstance[];
  /** Stamped instances in namespaces that no longer get one. */
  remove: TemplateInstance[];
  /** true: remove = release (label and ownerReference dropped), false: delete. */
  release: boolean;
  /** Counts and failing namespaces; the reconciler adds conditions and observedGeneration. */
  status: Omit<TemplateInstanceSetStatus, 'conditions' | 'observedGeneration'>;
  ready: ConditionDraft;
}

/** Per matching namespace: what it counts as. */
type NamespaceOutcome = { state: 'ready' | 'pending' } | ({ state: 'failed' } & FailingNamespace);

/** The name of every instance the Set stamps. */
export function instanceNameOf(set: TemplateInstanceSet): string {
  return set.spec.instanceName ?? set.metadata.name ?? '';
}

/** A problem with a LabelSelector that the API server's schema cannot catch, naming the field. */
export function selectorProblem(selector: LabelSelector | undefined): string | undefined {
  if (!selector) return 'spec.namespaceSelector is required';
  for (const [i, expr] of (selector.matchExpressions ?? []).entries()) {
    const field = `spec.namespaceSelector.matchExpressions[${i}]`;
    const values = expr.values ?? [];
    const needsValues = expr.operator === 'In' || expr.operator === 'NotIn';
    if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(expr.operator))
      return `${field}.operator: unknown operator "${String(expr.operator)}"`;
    if (needsValues && values.length === 0)
      return `${field}.values: operator ${expr.operator} needs at least one value`;
    if (!needsValues && values.length > 0)
      return `${field}.values: operator ${expr.operator} takes no values`;
  }
  return undefined;
}

/**
 * What is wrong with the Set's spec against its Template (nothing is changed while there is):
 * a ConfigMap override of a parameter the Template does not declare, or of one the Set already
 * reads with valueFrom (a fallback must be a literal).
 */
export function setSpecProblem(set: TemplateInstanceSet, template: Template): string | undefined {
  const selector = selectorProblem(set.spec.namespaceSelector);
  if (selector) return selector;
  const declared = new Set((template.spec.parameters ?? []).map((p) => p.name));
  const fromSet = new Map((set.spec.template.spec.parameters ?? []).map((p) => [p.name, p]));
  const listed = set.spec.overrides?.configMap?.parameters ?? [];
  for (const [i, name] of listed.entries()) {
    const field = `spec.overrides.configMap.parameters[${i}]`;
    if (!declared.has(name))
      return `${field}: Template ${templateName(template)} declares no parameter "${name}"`;
    if (fromSet.get(name)?.valueFrom)
      return `${field}: parameter "${name}" is set with valueFrom in spec.template.spec.parameters; a ConfigMap override needs a literal value (or none) to fall back to`;
  }
  return undefined;
}

function templateName(template: Template): string {
  return `${template.metadata.namespace ?? ''}/${template.metadata.name ?? ''}`;
}

/**
 * The namespace's overrides of the Template's parameters: labels, then annotations (which win),
 * `parameters.stencil.dev/<name>: <text>`. Keys naming a parameter the Template does not declare
 * are ignored (a namespace may carry overrides for several Sets). A text that does not fit the
 * parameter's type is refused, naming the namespace, the key and the parameter.
 */
export function namespaceOverrides(
  namespace: NamespaceView,
  template: Template,
): { ok: true; values: Map<string, string> } | { ok: false; message: string } {
  const values = new Map<string, string>();
  const source = new Map<string, string>();
  for (const [kind, map] of [
    ['label', namespace.labels],
    ['annotation', namespace.annotations],
  ] as const) {
    for (const [key, text] of Object.entries(map)) {
      if (!key.startsWith(PARAMETER_OVERRIDE_PREFIX)) continue;
      values.set(key.slice(PARAMETER_OVERRIDE_PREFIX.length), text);
      source.set(key.slice(PARAMETER_OVERRIDE_PREFIX.length), `${kind} ${key}`);
    }
  }
  const result = new Map<string, string>();
  for (const declaration of template.spec.parameters ?? []) {
    const text = values.get(declaration.name);
    if (text === undefined) continue;
    const coerced = coerceParameter({
      name: declaration.name,
      type: declaration.type,
      value: text,
      secret: false,
    });
    if (!coerced.ok)
      return {
        ok: false,
        message: `namespace "${namespace.name}" ${source.get(declaration.name) ?? ''}: ${coerced.problems[0]?.message ?? 'invalid value'}`,
      };
    result.set(declaration.name, text);
  }
  return { ok: true, values: result };
}

/** The value a ConfigMap override falls back to: the highest-precedence literal below it. */
function fallbackFor(
  name: string,
  entry: ParameterValue | undefined,
  template: Template,
): JsonValue | undefined {
  if (entry && entry.value !== undefined) return entry.value;
  const declaration = template.spec.parameters?.find((p) => p.name === name);
  if (!declaration || declaration.required) return undefined;
  if (declaration.value !== undefined) return declaration.value;
  // The empty value passes its own type only for these (SPEC §3 step 4).
  return declaration.type === 'number' || declaration.type === 'bool'
    ? undefined
    : emptyValue(declaration.type);
}

/**
 * The parameters of the instance stamped into a namespace: the Set's own, each overridden by the
 * namespace's literal, then the ConfigMap overrides as valueFrom with the rest as defaultValue.
 * Order: the Set's order, then added names sorted.
 */
export function stampedParameters(
  set: TemplateInstanceSet,
  template: Template,
  overrides: Map<string, string>,
): ParameterValue[] {
  const byName = new Map<string, ParameterValue>();
  for (const p of set.spec.template.spec.parameters ?? []) byName.set(p.name, p);
  for (const name of [...overrides.keys()].sort())
    byName.set(name, { name, value: overrides.get(name)! });
  const configMap = set.spec.overrides?.configMap;
  for (const name of [...(configMap?.parameters ?? [])].sort()) {
    const fallback = fallbackFor(name, byName.get(name), template);
    byName.set(name, {
      name,
      valueFrom: { configMapKeyRef: { name: configMap!.name, key: name } },
      ...(fallback !== undefined ? { defaultValue: fallback } : {}),
    });
  }
  return [...byName.values()];
}

export function ownerReferenceOf(set: TemplateInstanceSet): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: TEMPLATE_INSTANCE_SET_KIND,
    name: set.metadata.name ?? '',
    uid: set.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: false,
  };
}

/** The instance the Set stamps into `namespace` (the body of a server-side apply). */
export function stampedInstance(
  set: TemplateInstanceSet,
  namespace: string,
  parameters: ParameterValue[],
): TemplateInstance {
  const { metadata, spec } = set.spec.template;
  // The instance acts for whoever created the Set (ADR 0020), never for a requester written
  // into the Set's template by hand.
  const annotations = { ...(metadata?.annotations ?? {}) };
  delete annotations[ANNOTATION_REQUESTER];
  const requester = set.metadata.annotations?.[ANNOTATION_REQUESTER];
  if (requester !== undefined) annotations[ANNOTATION_REQUESTER] = requester;
  return {
    apiVersion: API_VERSION,
    kind: TEMPLATE_INSTANCE_KIND,
    metadata: {
      name: instanceNameOf(set),
      namespace,
      labels: { ...(metadata?.labels ?? {}), [LABEL_INSTANCE_SET]: set.metadata.name ?? '' },
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
      ownerReferences: [ownerReferenceOf(set)],
    },
    spec: {
      templateRef: { ...spec.templateRef },
      ...(parameters.length > 0 ? { parameters } : {}),
    },
  };
}

/**
 * The same instance, released: no Set label, no ownerReference (server-side apply drops them);
 * it keeps the requester it acts for.
 */
export function releasedInstance(live: TemplateInstance): TemplateInstance {
  const requester = live.metadata.annotations?.[ANNOTATION_REQUESTER];
  return {
    apiVersion: API_VERSION,
    kind: TEMPLATE_INSTANCE_KIND,
    metadata: {
      name: live.metadata.name,
      namespace: live.metadata.namespace,
      ...(requester === undefined ? {} : { annotations: { [ANNOTATION_REQUESTER]: requester } }),
    },
    spec: live.spec,
  };
}

/**
 * Whether this Set stamped the instance: it carries the Set's label, or the Set is its controller
 * (by uid). Either mark alone is enough, so an instance whose label someone removed is taken back
 * and stamped again (its label restored), not left in Conflict. Removing both takes the right to
 * `place` TemplateInstances (the chart's admission policy, ADR 0035); an instance detached so is
 * no longer the Set's.
 */
export function stampedBy(instance: TemplateInstance, set: TemplateInstanceSet): boolean {
  if (instance.metadata.labels?.[LABEL_INSTANCE_SET] === set.metadata.name) return true;
  const uid = set.metadata.uid;
  return (
    uid !== undefined &&
    (instance.metadata.ownerReferences ?? []).some((o) => o.uid === uid && o.controller === true)
  );
}

function includes(live: Record<string, string> | undefined, want: Record<string, string>): boolean {
  return Object.entries(want).every(([k, v]) => live?.[k] === v);
}

/** Whether the live instance already is what the Set would apply (no write needed). */
export function upToDate(live: TemplateInstance, desired: TemplateInstance): boolean {
  const owner = desired.metadata.ownerReferences?.[0];
  return (
    canonicalJson(live.spec) === canonicalJson(desired.spec) &&
    includes(live.metadata.labels, desired.metadata.labels ?? {}) &&
    includes(live.metadata.annotations, desired.metadata.annotations ?? {}) &&
    (live.metadata.ownerReferences ?? []).some((o) => o.uid === owner?.uid && o.controller === true)
  );
}

/**
 * The merge patch that makes `live` exactly `desired`: what `desired` holds, and null for every
 * key `live` has beyond it, at any depth of maps (lists are replaced whole by a merge patch).
 * Server-side apply keeps what another manager added (a parameter a tenant appended to a stamped
 * instance, a revision pinned in its templateRef); the Set owns a stamped spec whole.
 */
export function exactSpec(live: unknown, desired: JsonValue): JsonValue {
  if (!isPlainMap(live) || !isPlainMap(desired)) return desired;
  const patch: Record<string, JsonValue> = {};
  for (const key of Object.keys(live)) if (!Object.hasOwn(desired, key)) patch[key] = null;
  for (const [key, value] of Object.entries(desired)) patch[key] = exactSpec(live[key], value);
  return patch;
}

function isPlainMap(value: unknown): value is Record<string, JsonValue> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Ready / Failed / pending of an instance, judged on a status of its current generation. */
function instanceOutcome(instance: TemplateInstance, namespace: string): NamespaceOutcome {
  const status = instance.status;
  if (instance.metadata.deletionTimestamp) return { state: 'pending' };
  if (!status || status.observedGeneration !== instance.metadata.generation)
    return { state: 'pending' };
  const ready = status.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status === 'True') return { state: 'ready' };
  if (status.phase !== 'Failed') return { state: 'pending' };
  return {
    state: 'failed',
    namespace,
    reason: NamespaceFailureReason.InstanceFailed,
    message:
      `instance ${namespace}/${instance.metadata.name ?? ''}: ${ready?.reason ?? 'Failed'}: ${ready?.message ?? ''}`.slice(
        0,
        1024,
      ),
  };
}

const failed = (namespace: string, reason: string, message: string): NamespaceOutcome => ({
  state: 'failed',
  namespace,
  reason,
  message,
});

/** One matching namespace: its outcome, and the instance to apply if one must be written. */
function planNamespace(
  inputs: SetInputs & { template: Template },
  namespace: NamespaceView,
): { outcome: NamespaceOutcome; apply?: TemplateInstance } {
  const { set, template } = inputs;
  const name = instanceNameOf(set);
  const refusal = targetNamespaceRefusal(template, namespace.name, namespace.labels);
  if (refusal) return { outcome: failed(namespace.name, 'NamespaceNotPermitted', refusal) };
  const live = inputs.existing(namespace.name, name);
  if (live && !stampedBy(live, set))
    return {
      outcome: failed(
        namespace.name,
        NamespaceFailureReason.Conflict,
        `TemplateInstance ${namespace.name}/${name} exists and was not stamped by this Set (no label ${LABEL_INSTANCE_SET}=${set.metadata.name ?? ''}); it is left alone`,
      ),
    };
  const overrides = namespaceOverrides(namespace, template);
  if (!overrides.ok)
    return {
      outcome: failed(namespace.name, NamespaceFailureReason.InvalidOverride, overrides.message),
    };
  const desired = stampedInstance(
    set,
    namespace.name,
    stampedParameters(set, template, overrides.values),
  );
  if (live && upToDate(live, desired)) return { outcome: instanceOutcome(live, namespace.name) };
  // Terminating: it goes first (its deletion event brings the Set back).
  if (live?.metadata.deletionTimestamp) return { outcome: { state: 'pending' } };
  return { outcome: { state: 'pending' }, apply: desired };
}

/** The namespaces the Set's selector matches (terminating ones no longer do). */
export function matchingNamespaces(
  set: TemplateInstanceSet,
  namespaces: NamespaceView[],
): NamespaceView[] {
  return namespaces
    .filter((n) => !n.terminating && selectorMatches(set.spec.namespaceSelector, n.labels))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function readyDraft(
  desired: number,
  ready: number,
  failing: FailingNamespace[],
  failedCount: number,
): ConditionDraft {
  if (desired === 0)
    return draft(
      InstanceSetConditionType.Ready,
      true,
      InstanceSetReason.AllReady,
      'no namespace matches spec.namespaceSelector',
    );
  if (ready === desired)
    return draft(
      InstanceSetConditionType.Ready,
      true,
      InstanceSetReason.AllReady,
      `${ready} of ${desired} namespaces have a Ready instance`,
    );
  const first = failing[0];
  const failedText =
    failedCount > 0 && first
      ? `; ${failedCount} failed, first ${first.namespace}: ${first.reason}`
      : '';
  return draft(
    InstanceSetConditionType.Ready,
    false,
    InstanceSetReason.NotReady,
    `${ready} of ${desired} namespaces have a Ready instance${failedText}`,
  );
}

/** A Set that cannot act (no Template, invalid spec): a condition only, nothing changes. */
export function blockedPlan(reason: string, message: string): SetPlan {
  return {
    apply: [],
    remove: [],
    release: false,
    status: {},
    ready: draft(InstanceSetConditionType.Ready, false, reason, message),
  };
}

/** One pass over a Set: what to apply, what to remove, and the resulting counts. */
export function planSet(inputs: SetInputs): SetPlan {
  const { set, template } = inputs;
  if (!template) {
    const ref = set.spec.template.spec.templateRef;
    return blockedPlan(
      InstanceSetReason.TemplateNotFound,
      `spec.template.spec.templateRef: Template ${ref.namespace}/${ref.name} does not exist; no instance was created or deleted`,
    );
  }
  const problem = setSpecProblem(set, template);
  if (problem)
    return blockedPlan(
      InstanceSetReason.InvalidSpec,
      `${problem}; no instance was created or deleted`,
    );
  const matching = matchingNamespaces(set, inputs.namespaces);
  const apply: TemplateInstance[] = [];
  const failing: FailingNamespace[] = [];
  let ready = 0;
  for (const namespace of matching) {
    const planned = planNamespace({ ...inputs, template }, namespace);
    if (planned.apply) apply.push(planned.apply);
    if (planned.outcome.state === 'ready') ready++;
    if (planned.outcome.state === 'failed') {
      const { namespace: ns, reason, message } = planned.outcome;
      failing.push({ namespace: ns, reason, message });
    }
  }
  const keep = new Set(matching.map((n) => n.name));
  const name = instanceNameOf(set);
  const remove = inputs.stamped.filter(
    (i) =>
      stampedBy(i, set) &&
      !i.metadata.deletionTimestamp &&
      (!keep.has(i.metadata.namespace ?? '') || i.metadata.name !== name),
  );
  return {
    apply,
    remove,
    release: set.spec.preserveOnRemoval === true,
    status: {
      desired: matching.length,
      ready,
      failed: failing.length,
      ...(failing.length > 0 ? { failingNamespaces: failing.slice(0, MAX_FAILING_LISTED) } : {}),
    },
    ready: readyDraft(matching.length, ready, failing, failing.length),
  };
}
