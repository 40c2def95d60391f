// Which reconciles a watch event of the operator's own caches asks for, as the routes of the
// instance and Template controllers: an instance's spec or metadata change (never its status), a
// Template's change fanned out to the instances that name it, a namespace's label change to the
// instances in it. Lookups go through the cache indexes.
import type { KubeObject, ObjectHead } from '../../api/object-meta.ts';
import type { RolloutStatus, Template, TemplateRevision } from '../../api/template.ts';
import {
  ANNOTATION_APPLYSET_GROUP_KINDS,
  ANNOTATION_APPLYSET_NAMESPACES,
  ANNOTATION_APPLYSET_TOOLING,
  FINALIZER_INSTANCE,
  LABEL_APPLYSET_ID,
} from '../../api/well-known.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import { instanceKeyName } from '../../engine/shared/instance-key.ts';
import { templateRefOf } from '../../engine/shared/template-ref.ts';
import { stagePositions } from '../../engine/releases/rollout.ts';
import { revisionTarget, type RolloutView } from '../../engine/releases/content-choice.ts';
import { requestOf, watch, type Change, type Watch } from '../../framework/controller.ts';
import type { Request } from '../../framework/reconciler.ts';
import { rolloutMemberOf } from '../../reconcile/template-content.ts';
import type { OperatorCaches } from './caches.ts';
import type { PublishedKind } from './published-kinds.ts';

/** Status-only updates (including our own status writes) do not need another reconcile. */
export function specOrMetadataChanged(object: ObjectHead, old: ObjectHead | undefined): boolean {
  if (!old) return true;
  const a = object.metadata;
  const b = old.metadata;
  return (
    a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    JSON.stringify(a.annotations ?? {}) !== JSON.stringify(b.annotations ?? {}) ||
    JSON.stringify(a.labels ?? {}) !== JSON.stringify(b.labels ?? {}) ||
    JSON.stringify(a.finalizers ?? []) !== JSON.stringify(b.finalizers ?? [])
  );
}

/** What a pass writes on its instance before applying (ApplySet record), label or annotation. */
const RECORD_KEYS = [
  LABEL_APPLYSET_ID,
  ANNOTATION_APPLYSET_TOOLING,
  ANNOTATION_APPLYSET_GROUP_KINDS,
  ANNOTATION_APPLYSET_NAMESPACES,
];

function withoutRecord(object: ObjectHead): ObjectHead {
  const strip = (map: Record<string, string> | undefined): Record<string, string> =>
    Object.fromEntries(Object.entries(map ?? {}).filter(([k]) => !RECORD_KEYS.includes(k)));
  const { metadata } = object;
  return {
    ...object,
    metadata: {
      ...metadata,
      labels: strip(metadata.labels),
      annotations: strip(metadata.annotations),
      finalizers: (metadata.finalizers ?? []).filter((f) => f !== FINALIZER_INSTANCE),
    },
  };
}

/**
 * The update a pass made before applying (our finalizer added, the ApplySet record written):
 * the pass goes on with the result, so its event needs no second pass. A removed finalizer, or
 * anything else changed beside, still does.
 */
export function ownRecordWritten(object: ObjectHead, old: ObjectHead): boolean {
  const removedOurs =
    (old.metadata.finalizers ?? []).includes(FINALIZER_INSTANCE) &&
    !(object.metadata.finalizers ?? []).includes(FINALIZER_INSTANCE);
  return (
    !removedOurs &&
    specOrMetadataChanged(object, old) &&
    !specOrMetadataChanged(withoutRecord(object), withoutRecord(old))
  );
}

/** What a progressive rollout judges an instance by changed (its revision, phase, generation). */
function reportedProgress(instance: TemplateInstance, old: TemplateInstance): boolean {
  const a = instance.status;
  const b = old.status;
  return (
    a?.revision !== b?.revision ||
    a?.phase !== b?.phase ||
    a?.observedGeneration !== b?.observedGeneration
  );
}

/** A pin holds a revision and is reported on the Template: its Template reconciles. */
function pinChanged(instance: TemplateInstance, old: TemplateInstance | undefined): boolean {
  return instance.spec.templateRef.revision !== old?.spec.templateRef.revision;
}

function rolloutChanged(template: Template, old: Template): boolean {
  return JSON.stringify(template.status?.rollout) !== JSON.stringify(old.status?.rollout);
}

/**
 * The instance controller's watches: its own spec or metadata changes (not those its own pass
 * made), a Template's change to the instances that name it, a new revision to those that do not
 * show it yet, a namespace's label change to the instances in it.
 */
export function instanceWatches(caches: OperatorCaches): Watch[] {
  const { kinds } = caches;
  return [
    watch(kinds.instances, instanceChanged),
    watch(kinds.templates, (change) => instancesOfTemplate(caches, change)),
    watch(kinds.revisions, (change) => instancesBehindRevision(caches, change)),
    watch(kinds.namespaces, (change) => instancesInNamespace(caches, change)),
  ];
}

/**
 * The routes of a kind a Template publishes (ADR 0032), as those of TemplateInstances: to the
 * instance controller its objects' spec or metadata changes, to the Template controller their
 * deletions, pins and rollout reports, each object read as the instance it stands for.
 */
export function publishedKindWatches(
  caches: Pick<OperatorCaches, 'template'>,
  kind: PublishedKind,
): { instances: Watch; templates: Watch } {
  return {
    instances: watch(kind.cache, instanceChanged),
    templates: watch(kind.cache, (change) =>
      templateOfInstance(caches, {
        ...change,
        object: kind.view(change.object),
        old: change.old && kind.view(change.old),
      }),
    ),
  };
}

/**
 * The Template controller's watches: its own changes, its instances' deletions, pins and rollout
 * reports, and its new revisions.
 */
export function templateWatches(caches: OperatorCaches): Watch[] {
  const { kinds } = caches;
  return [
    watch(kinds.templates, templateChanged),
    watch(kinds.instances, (change) => templateOfInstance(caches, change)),
    watch(kinds.revisions, templateOfRevision),
  ];
}

/** An instance's request: its key names its kind when it is a typed instance (ADR 0032). */
export function instanceRequest(instance: TemplateInstance | KubeObject): Request {
  return { namespace: instance.metadata.namespace ?? '', name: instanceKeyName(instance) };
}

function instanceChanged({ type, object, old }: Change<ObjectHead>): Request[] {
  if (type === 'DELETED' || (old && ownRecordWritten(object, old))) return [];
  return specOrMetadataChanged(object, old) ? [instanceRequest(object)] : [];
}

export function templateOfInstance(
  caches: Pick<OperatorCaches, 'template'>,
  { type, object: instance, old }: Change<TemplateInstance>,
): Request[] {
  // A Template held by its finalizer may be free to go once an instance is gone.
  if (type === 'DELETED' || pinChanged(instance, old)) return [templateRefOf(instance)];
  if (!old || !reportedProgress(instance, old)) return [];
  // An instance of a rollout in flight reported: a progressing one may admit more or halt, and a
  // halted one names the instances failing now (a second canary may fail after the halt).
  const ref = templateRefOf(instance);
  const phase = caches.template(ref.namespace, ref.name)?.status?.rollout?.phase;
  return phase === 'Progressing' || phase === 'Halted' ? [ref] : [];
}

/** A revision's change: its Template records it (and a new one may start a rollout). */
function templateOfRevision({ object: revision }: Change<TemplateRevision>): Request[] {
  return [{ namespace: revision.metadata.namespace ?? '', name: revision.spec.template }];
}

/**
 * A new revision: every instance that does not show it as `status.latestRevision` yet learns its
 * number, the pinned and those a progressive rollout has not moved included: their pass renders
 * what it rendered before and only updates the status. (Requeued on the Template's edit, they ran
 * before the revision existed and kept the old number until the resync.)
 */
export function instancesBehindRevision(
  caches: Pick<OperatorCaches, 'instancesOf'>,
  { type, object: revision }: Change<TemplateRevision>,
): Request[] {
  if (type !== 'ADDED') return [];
  return caches
    .instancesOf(revision.metadata.namespace ?? '', revision.spec.template)
    .filter((instance) => (instance.status?.latestRevision ?? 0) < revision.spec.revision)
    .map(instanceRequest);
}

/**
 * The rollout moved on: exactly the instances whose revision it changed are reconciled, judged
 * by the same choice their passes make (revisionTarget), under the old and the new state.
 */
function movedInstances(caches: OperatorCaches, template: Template, old: Template): Request[] {
  const { namespace = '', name = '' } = template.metadata;
  const instances = caches.instancesOf(namespace, name);
  const members = instances.map((i) => rolloutMemberOf(i, caches));
  const positions = stagePositions(members, template.spec.rollout);
  const latest = template.status?.latestRevision;
  const moved: Request[] = [];
  for (const [i, instance] of instances.entries()) {
    const member = members[i]!;
    const view = (status: RolloutStatus | undefined): RolloutView => ({
      member: () => member,
      position: () => positions.get(member.key) ?? -1,
      status,
    });
    const before = revisionTarget(instance, template, latest, view(old.status?.rollout));
    const after = revisionTarget(instance, template, latest, view(template.status?.rollout));
    if (before !== after) moved.push(instanceRequest(instance));
  }
  return moved;
}

function templateChanged({ type, object, old }: Change<Template>): Request[] {
  return type === 'DELETED' || specOrMetadataChanged(object, old) ? [requestOf(object)] : [];
}

function instancesOfTemplate(
  caches: OperatorCaches,
  { type, object: template, old }: Change<Template>,
): Request[] {
  const moved = old && rolloutChanged(template, old) ? movedInstances(caches, template, old) : [];
  if (type !== 'DELETED' && !specOrMetadataChanged(template, old)) return moved;
  const { namespace = '', name = '' } = template.metadata;
  return [...moved, ...caches.instancesOf(namespace, name).map(instanceRequest)];
}

/** A namespace selector in targetNamespaces may now match, or no longer (SPEC §4). */
function instancesInNamespace(
  caches: OperatorCaches,
  { object: namespace, old }: Change<ObjectHead>,
): Request[] {
  const labels = JSON.stringify(namespace.metadata.labels ?? {});
  if (old && JSON.stringify(old.metadata.labels ?? {}) === labels) return [];
  return caches.instancesIn(namespace.metadata.name ?? '').map(instanceRequest);
}
