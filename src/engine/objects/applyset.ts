// The instance as an ApplySet parent (KEP-3659, the convention kubectl's `--applyset` and kro
// use): the kinds and namespaces an instance may own are recorded on the instance itself, as
// annotations written in the same metadata patch as its finalizer, before anything is applied;
// every rendered object carries the set's id in `applyset.kubernetes.io/part-of`. Pruning and
// deletion list by these kinds, so an object can never be applied under a kind nobody lists.
import type { KubeObject } from '../../api/object-meta.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import {
  ANNOTATION_APPLYSET_GROUP_KINDS,
  ANNOTATION_APPLYSET_NAMESPACES,
  ANNOTATION_APPLYSET_TOOLING,
  APPLYSET_TOOLING,
  FINALIZER_INSTANCE,
  LABEL_APPLYSET_ID,
} from '../../api/well-known.ts';
import { applySetId, parseGvkKey } from './inventory.ts';
import { groupOf, groupVersionOf } from './resource-scope.ts';

/** `Deployment.apps`, or `ConfigMap` for the core group: the annotation's form of a kind. */
export function groupKindName(object: { apiVersion: string; kind: string }): string {
  const group = groupOf(object.apiVersion);
  return group ? `${object.kind}.${group}` : object.kind;
}

/** The inverse of groupKindName: the kind is up to the first dot (kinds have none). */
function parseGroupKindName(name: string): { group: string; kind: string } | undefined {
  const dot = name.indexOf('.');
  const kind = dot < 0 ? name : name.slice(0, dot);
  const group = dot < 0 ? '' : name.slice(dot + 1);
  return /^[A-Za-z][A-Za-z0-9]*$/.test(kind) ? { group, kind } : undefined;
}

function listOf(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/**
 * Every group-kind the instance has recorded: its ApplySet annotation, and the `trackedGVKs` an
 * operator before the annotation kept in the status (so an upgrade forgets no kind).
 */
export function recordedGroupKinds(instance: TemplateInstance): string[] {
  const annotated = listOf(instance.metadata.annotations?.[ANNOTATION_APPLYSET_GROUP_KINDS]);
  const legacy = (instance.status?.trackedGVKs ?? []).flatMap((key) => {
    const gvk = parseGvkKey(key);
    return gvk ? [groupKindName(gvk)] : [];
  });
  return [...new Set([...annotated, ...legacy])].sort();
}

/**
 * Every namespace the instance may own objects in: its own, those recorded in its ApplySet
 * annotation, and those of `known` entries.
 */
export function recordedNamespaces(
  instance: TemplateInstance,
  known: readonly { namespace?: string }[],
): string[] {
  const own = instance.metadata.namespace ?? '';
  const recorded = listOf(instance.metadata.annotations?.[ANNOTATION_APPLYSET_NAMESPACES]);
  const seen = known.flatMap((k) => (k.namespace ? [k.namespace] : []));
  return [...new Set([own, ...recorded, ...seen])].filter((ns) => ns !== '').sort();
}

/** What an instance writes on itself before applying: only the keys that change. */
export interface ParentRecord {
  finalizers?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/**
 * What the instance must carry before `desired` is applied — the finalizer, the ApplySet id,
 * tooling, group-kinds and additional namespaces (what was recorded plus what is about to be
 * applied; nothing recorded is ever dropped here) — or undefined when it carries all of it.
 */
export function parentRecord(
  instance: TemplateInstance,
  desired: readonly KubeObject[],
): ParentRecord | undefined {
  const { metadata } = instance;
  const own = metadata.namespace ?? '';
  const record: ParentRecord = {};
  const finalizers = metadata.finalizers ?? [];
  if (!finalizers.includes(FINALIZER_INSTANCE))
    record.finalizers = [...finalizers, FINALIZER_INSTANCE];
  const id = applySetId({
    name: metadata.name ?? '',
    namespace: own,
    apiVersion: instance.apiVersion,
    kind: instance.kind,
  });
  if (metadata.labels?.[LABEL_APPLYSET_ID] !== id) record.labels = { [LABEL_APPLYSET_ID]: id };
  const annotations: Record<string, string> = {};
  const current = metadata.annotations ?? {};
  if (current[ANNOTATION_APPLYSET_TOOLING] !== APPLYSET_TOOLING)
    annotations[ANNOTATION_APPLYSET_TOOLING] = APPLYSET_TOOLING;
  const kinds = [
    ...new Set([...recordedGroupKinds(instance), ...desired.map(groupKindName)]),
  ].sort();
  if (current[ANNOTATION_APPLYSET_GROUP_KINDS] !== kinds.join(','))
    annotations[ANNOTATION_APPLYSET_GROUP_KINDS] = kinds.join(',');
  const namespaces = [
    ...new Set([
      ...listOf(current[ANNOTATION_APPLYSET_NAMESPACES]),
      ...desired.map((o) => o.metadata.namespace ?? own),
    ]),
  ]
    .filter((ns) => ns !== own)
    .sort();
  if ((current[ANNOTATION_APPLYSET_NAMESPACES] ?? '') !== namespaces.join(','))
    annotations[ANNOTATION_APPLYSET_NAMESPACES] = namespaces.join(',');
  if (Object.keys(annotations).length > 0) record.annotations = annotations;
  return Object.keys(record).length > 0 ? record : undefined;
}

/**
 * The instance's recorded kinds as GVK keys (`group/version/Kind`), each at a version one of
 * `known` uses (what is rendered now, what the status lists); a kind no hint covers gets an empty
 * version (`group//Kind`), for the caller to resolve through discovery.
 */
export function recordedKinds(
  instance: TemplateInstance,
  known: readonly { apiVersion: string; kind: string }[],
): string[] {
  const versions = new Map<string, string>();
  for (const k of known) versions.set(groupKindName(k), groupVersionOf(k.apiVersion).version);
  for (const key of instance.status?.trackedGVKs ?? []) {
    const gvk = parseGvkKey(key);
    if (gvk && !versions.has(groupKindName(gvk)))
      versions.set(groupKindName(gvk), groupVersionOf(gvk.apiVersion).version);
  }
  const kinds = new Set([...recordedGroupKinds(instance), ...versions.keys()]);
  return [...kinds]
    .flatMap((name) => {
      const gk = parseGroupKindName(name);
      // The core group has one version; any other is discovery's to say.
      const version = versions.get(name) ?? (gk?.group === '' ? 'v1' : '');
      return gk ? [`${gk.group}/${version}/${gk.kind}`] : [];
    })
    .sort();
}
