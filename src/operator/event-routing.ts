// Which reconciles a watch event of the operator's own caches asks for: an instance's spec or
// metadata change (never its status), a Template's change fanned out to the instances that name
// it, a namespace's label change to the instances in it. Lookups go through the cache indexes.
import type { KubeObject, ObjectHead } from '../api/object-meta.ts';
import type { RolloutStatus, Template, TemplateRevision } from '../api/template.ts';
import { FINALIZER_INSTANCE } from '../api/well-known.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import { templateRefOf } from '../engine/template-ref.ts';
import { stagePositions } from '../engine/rollout.ts';
import { revisionTarget, type RolloutView } from '../engine/content-choice.ts';
import type { Request } from '../framework/reconciler.ts';
import { rolloutMemberOf } from '../reconcile/template-content.ts';
import type { CacheHandlers, OperatorCaches } from './caches.ts';

export interface Enqueue {
  instance(request: Request): void;
  template(request: Request): void;
}

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

/**
 * The update that only added our finalizer: the reconcile that wrote it goes on with the result,
 * so its event needs no second pass (a removed finalizer, or anything else changed, still does).
 */
export function ownFinalizerAdded(object: ObjectHead, old: ObjectHead): boolean {
  const before = old.metadata.finalizers ?? [];
  const after = object.metadata.finalizers ?? [];
  if (before.includes(FINALIZER_INSTANCE) || !after.includes(FINALIZER_INSTANCE)) return false;
  const withoutOurs = after.filter((f) => f !== FINALIZER_INSTANCE);
  return (
    JSON.stringify(withoutOurs) === JSON.stringify(before) &&
    !specOrMetadataChanged(object, {
      ...old,
      metadata: { ...old.metadata, finalizers: after },
    })
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

export function requestOf(object: { metadata: KubeObject['metadata'] }): Request {
  return { namespace: object.metadata.namespace ?? '', name: object.metadata.name ?? '' };
}

export class EventRouter {
  constructor(
    private readonly caches: OperatorCaches,
    private readonly enqueue: Enqueue,
  ) {}

  handlers(): CacheHandlers {
    return {
      instance: (event, old) => this.onInstance(event.type, event.object, old),
      template: (event, old) => this.onTemplate(event.type, event.object, old),
      namespace: (event, old) => this.onNamespace(event.object, old),
      revision: (event) => this.onRevision(event.type, event.object),
    };
  }

  private onInstance(type: string, instance: TemplateInstance, old?: TemplateInstance): void {
    // A Template held by its finalizer may be free to go once an instance is gone.
    if (type === 'DELETED') this.enqueue.template(templateRefOf(instance));
    else if (pinChanged(instance, old)) this.enqueue.template(templateRefOf(instance));
    else if (old && reportedProgress(instance, old)) this.enqueueRollout(instance);
    if (type === 'DELETED' || (old && ownFinalizerAdded(instance, old))) return;
    if (specOrMetadataChanged(instance, old)) this.enqueue.instance(requestOf(instance));
  }

  /**
   * An instance of a rollout in flight reported: a progressing one may admit more or halt, and a
   * halted one names the instances failing now (a second canary may fail after the halt).
   */
  private enqueueRollout(instance: TemplateInstance): void {
    const ref = templateRefOf(instance);
    const phase = this.caches.template(ref.namespace, ref.name)?.status?.rollout?.phase;
    if (phase === 'Progressing' || phase === 'Halted') this.enqueue.template(ref);
  }

  /**
   * A new revision: its Template records it (and may start a rollout). Every instance that does
   * not show it as `status.latestRevision` yet learns its number, the pinned and those a
   * progressive rollout has not moved included: their pass renders what it rendered before and
   * only updates the status. (Requeued on the Template's edit, they ran before the revision
   * existed and kept the old number until the resync.)
   */
  private onRevision(type: string, revision: TemplateRevision): void {
    const namespace = revision.metadata.namespace ?? '';
    const name = revision.spec.template;
    this.enqueue.template({ namespace, name });
    if (type !== 'ADDED') return;
    for (const instance of this.caches.instancesOf(namespace, name))
      if ((instance.status?.latestRevision ?? 0) < revision.spec.revision)
        this.enqueue.instance(requestOf(instance));
  }

  /** The rollout moved on: exactly the instances whose revision it changed are reconciled. */
  private enqueueMoved(template: Template, old: Template): void {
    const { namespace = '', name = '' } = template.metadata;
    const instances = this.caches.instancesOf(namespace, name);
    const members = instances.map((i) => rolloutMemberOf(i, this.caches));
    const positions = stagePositions(members, template.spec.rollout);
    const latest = template.status?.latestRevision;
    for (const [i, instance] of instances.entries()) {
      const member = members[i]!;
      const view = (status: RolloutStatus | undefined): RolloutView => ({
        member: () => member,
        position: () => positions.get(member.key) ?? -1,
        status,
      });
      const before = revisionTarget(instance, template, latest, view(old.status?.rollout));
      const after = revisionTarget(instance, template, latest, view(template.status?.rollout));
      if (before !== after) this.enqueue.instance(requestOf(instance));
    }
  }

  private onTemplate(type: string, template: Template, old?: Template): void {
    if (old && rolloutChanged(template, old)) this.enqueueMoved(template, old);
    if (type !== 'DELETED' && !specOrMetadataChanged(template, old)) return;
    this.enqueue.template(requestOf(template));
    const { namespace = '', name = '' } = template.metadata;
    for (const instance of this.caches.instancesOf(namespace, name))
      this.enqueue.instance(requestOf(instance));
  }

  /** A namespace selector in targetNamespaces may now match, or no longer (SPEC §4). */
  private onNamespace(namespace: ObjectHead, old?: ObjectHead): void {
    const labels = JSON.stringify(namespace.metadata.labels ?? {});
    if (old && JSON.stringify(old.metadata.labels ?? {}) === labels) return;
    for (const instance of this.caches.instancesIn(namespace.metadata.name ?? ''))
      this.enqueue.instance(requestOf(instance));
  }
}
