// Which reconciles a watch event of the operator's own caches asks for: an instance's spec or
// metadata change (never its status), a Template's change fanned out to the instances that name
// it, a namespace's label change to the instances in it. Lookups go through the cache indexes.
import type { KubeObject, ObjectHead } from '../api/object-meta.ts';
import type { Template } from '../api/template.ts';
import { FINALIZER_INSTANCE } from '../api/well-known.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import { templateRefOf } from '../engine/instance-evaluation.ts';
import type { Request } from '../framework/reconciler.ts';
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
    };
  }

  private onInstance(type: string, instance: TemplateInstance, old?: TemplateInstance): void {
    // A Template held by its finalizer may be free to go once an instance is gone.
    if (type === 'DELETED') this.enqueue.template(templateRefOf(instance));
    else if (old && ownFinalizerAdded(instance, old)) return;
    else if (specOrMetadataChanged(instance, old)) this.enqueue.instance(requestOf(instance));
  }

  private onTemplate(type: string, template: Template, old?: Template): void {
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
