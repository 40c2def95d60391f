// TemplateInstanceSets in the operator (ADR 0014): the routing of the caches' events to the Set
// controller, and the cache view its reconciler reads. A namespace added, removed or relabelled
// (or its override annotations changed) re-evaluates every Set; a stamped instance's change its
// Set; a Template's change the Sets that reference it.
import type { ObjectHead } from '../../api/object-meta.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import {
  LABEL_INSTANCE_SET,
  PARAMETER_OVERRIDE_PREFIX,
  TEMPLATE_INSTANCE_SET_KIND,
} from '../../api/well-known.ts';
import type { NamespaceView } from '../../engine/instance-sets/instance-set.ts';
import { watch, type Watch } from '../../framework/controller.ts';
import type { Request } from '../../framework/reconciler.ts';
import type { InstanceSetCache } from '../../reconcile/instance-set-reconciler.ts';
import type { OperatorCaches } from './caches.ts';
import { specOrMetadataChanged } from './event-routing.ts';

/** Only the override annotations are kept of a namespace: they are all a Set reads. */
function overrideAnnotations(namespace: ObjectHead): Record<string, string> {
  return Object.fromEntries(
    Object.entries(namespace.metadata.annotations ?? {}).filter(([key]) =>
      key.startsWith(PARAMETER_OVERRIDE_PREFIX),
    ),
  );
}

function namespaceView(namespace: ObjectHead): NamespaceView {
  return {
    name: namespace.metadata.name ?? '',
    labels: namespace.metadata.labels ?? {},
    annotations: overrideAnnotations(namespace),
    terminating: namespace.metadata.deletionTimestamp !== undefined,
  };
}

/** What a Set judges an instance by: its spec, metadata, readiness and the generation seen. */
export function instanceChanged(
  instance: TemplateInstance,
  old: TemplateInstance | undefined,
): boolean {
  if (specOrMetadataChanged(instance, old)) return true;
  const ready = (i: TemplateInstance | undefined): string =>
    JSON.stringify([
      i?.status?.phase,
      i?.status?.observedGeneration,
      i?.status?.conditions?.find((c) => c.type === 'Ready'),
    ]);
  return ready(instance) !== ready(old);
}

export function namespaceChanged(namespace: ObjectHead, old: ObjectHead | undefined): boolean {
  if (!old) return true;
  const view = (n: ObjectHead): string => JSON.stringify(namespaceView(n));
  return view(namespace) !== view(old);
}

function controllingSet(instance: TemplateInstance): string | undefined {
  return instance.metadata.ownerReferences?.find(
    (o) => o.controller === true && o.kind === TEMPLATE_INSTANCE_SET_KIND,
  )?.name;
}

/**
 * The Set controller's watches: a Set's own change; an instance's change, to the Set that stamped
 * it (and the one that did before its label moved); any namespace's change, to every Set; a
 * Template's change, to the Sets that reference it.
 */
export function setWatches(caches: OperatorCaches): Watch[] {
  const { kinds } = caches;
  const named = (...names: (string | undefined)[]): Request[] =>
    names.filter((name): name is string => !!name).map((name) => ({ namespace: '', name }));
  return [
    watch(kinds.sets, ({ type, object, old }) =>
      type === 'DELETED' || specOrMetadataChanged(object, old) ? named(object.metadata.name) : [],
    ),
    watch(kinds.instances, ({ type, object, old }) => {
      // The label, else the controlling Set: an instance whose label was removed is taken back.
      const set = object.metadata.labels?.[LABEL_INSTANCE_SET] ?? controllingSet(object);
      const before = old?.metadata.labels?.[LABEL_INSTANCE_SET];
      return named(
        before && before !== set ? before : undefined,
        set && (type !== 'MODIFIED' || instanceChanged(object, old)) ? set : undefined,
      );
    }),
    watch(kinds.namespaces, ({ type, object, old }) =>
      type !== 'MODIFIED' || namespaceChanged(object, old)
        ? named(...kinds.sets.list().map((set) => set.metadata.name))
        : [],
    ),
    watch(kinds.templates, ({ type, object, old }) => {
      if (type === 'MODIFIED' && !specOrMetadataChanged(object, old)) return [];
      const { namespace, name } = object.metadata;
      const users = kinds.sets.list().filter((set) => {
        const ref = set.spec.template?.spec?.templateRef;
        return ref?.namespace === namespace && ref?.name === name;
      });
      return named(...users.map((set) => set.metadata.name));
    }),
  ];
}

/** What the Set reconciler reads of the caches: it sees only namespaces the operator watches. */
export function setCache(
  caches: OperatorCaches,
  namespaces: string[] | undefined,
): InstanceSetCache {
  const watched = namespaces && new Set(namespaces);
  return {
    namespaces: () =>
      caches
        .namespaces()
        .filter((n) => !watched || watched.has(n.metadata.name ?? ''))
        .map(namespaceView),
    instancesOfSet: (name) => caches.instancesOfSet(name),
    instance: (namespace, name) => caches.instance(namespace, name),
  };
}
