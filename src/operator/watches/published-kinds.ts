// The kinds Templates publish (ADR 0032), each with its informers while its CRD is Established:
// the instance caches beside the TemplateInstance one. Their objects are read as the
// TemplateInstances they stand for (instanceView), so everything that reads instances from the
// cache reads typed ones the same way.
import type { TemplateInstance } from '../../api/template-instance.ts';
import { KindCache } from '../../framework/controller.ts';
import { instanceView, type TypedInstance } from '../../engine/typed-api/instance-view.ts';
import type { PublishedCrd } from '../../engine/typed-api/api-names.ts';

const BY_NAMESPACE = 'namespace';

/** `Kind.group` of a published kind, as instance keys name it. */
export function groupKindOf(kind: { kind: string; group: string }): string {
  return `${kind.kind}.${kind.group}`;
}

export class PublishedKind {
  readonly cache: KindCache<TypedInstance>;
  readonly apiVersion: string;
  private readonly views = new WeakMap<TypedInstance, TemplateInstance>();

  constructor(readonly spec: PublishedCrd) {
    this.apiVersion = `${spec.group}/${spec.version}`;
    this.cache = new KindCache<TypedInstance>({
      group: spec.group,
      version: spec.version,
      plural: spec.plural,
      namespaced: true,
      indexes: { [BY_NAMESPACE]: (object) => [object.metadata.namespace ?? ''] },
    });
  }

  /** `<plural>.<group>`: its CRD's name. */
  get crdName(): string {
    return `${this.spec.plural}.${this.spec.group}`;
  }

  /**
   * The TemplateInstance an object stands for, made once per version of the object (the informer
   * replaces an object on every change): instancesOf and event routing read every instance of a
   * Template at once, and a view is as shared as the cached object it was made from.
   */
  view(object: TypedInstance): TemplateInstance {
    let view = this.views.get(object);
    if (!view) {
      view = instanceView(object, this.spec.publisher);
      this.views.set(object, view);
    }
    return view;
  }

  get(namespace: string, name: string): TemplateInstance | undefined {
    const object = this.cache.get(namespace, name);
    return object && this.view(object);
  }

  list(): TemplateInstance[] {
    return this.cache.list().map((o) => this.view(o));
  }

  in(namespace: string): TemplateInstance[] {
    return this.cache.byIndex(BY_NAMESPACE, namespace).map((o) => this.view(o));
  }
}

/** The published kinds the operator watches, by `Kind.group`. */
export class PublishedKinds {
  private readonly kinds = new Map<string, { kind: PublishedKind; stop: () => void }>();

  get(groupKind: string): PublishedKind | undefined {
    return this.kinds.get(groupKind)?.kind;
  }

  all(): PublishedKind[] {
    return [...this.kinds.values()].map((k) => k.kind);
  }

  /** The kinds `Template namespace/name` publishes (one, unless a change is under way). */
  of(namespace: string, name: string): PublishedKind[] {
    return this.all().filter(
      (k) => k.spec.publisher.namespace === namespace && k.spec.publisher.name === name,
    );
  }

  /**
   * Watches a kind: `start` connects the routes of its changes and starts its informers (routes
   * first, so its first list is routed too), and returns what stops them. A kind already watched
   * with the same spec is left as it is; with another spec (a new version), it is watched anew.
   */
  add(spec: PublishedCrd, start: (kind: PublishedKind) => () => void): PublishedKind {
    const key = groupKindOf(spec);
    const existing = this.kinds.get(key);
    if (existing && JSON.stringify(existing.kind.spec) === JSON.stringify(spec))
      return existing.kind;
    existing?.stop();
    const kind = new PublishedKind(spec);
    this.kinds.set(key, { kind, stop: start(kind) });
    return kind;
  }

  /** Stops watching a kind (its CRD is gone); what was cached of it is dropped. */
  remove(groupKind: string): void {
    this.kinds.get(groupKind)?.stop();
    this.kinds.delete(groupKind);
  }

  stopAll(): void {
    for (const key of [...this.kinds.keys()]) this.remove(key);
  }
}
