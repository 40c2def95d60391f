// The limit: the fewest requests that converge the same workload — per rendered object one
// server-side dry run and one server-side apply, per instance one status write — sent at the
// operator's concurrency through the same client stack. Stencil's converge time is judged by it.
import type { KubeObject } from '../src/api/object-meta.ts';
import type { KubeCluster } from '../src/kube/cluster.ts';
import {
  CLIENT_CONCURRENCY,
  inParallel,
  instanceObject,
  namespaceObject,
  renderedObjects,
  workload,
} from './workload.ts';

const CONDITIONS = [
  'TemplateResolved',
  'TargetNamespaceAllowed',
  'ParametersValid',
  'Rendered',
  'Applied',
  'Synced',
  'Ready',
];

/** A status the size of the one Stencil writes for this workload. */
function readyStatus(objects: KubeObject[], now: string): Record<string, unknown> {
  return {
    phase: 'Ready',
    observedGeneration: 1,
    resolvedParameters: [
      { name: 'password', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
      { name: 'shared', valueFrom: { configMapKeyRef: { name: 'shared', key: 'setting' } } },
    ],
    renderedResources: objects.map((o) => ({
      apiVersion: o.apiVersion,
      kind: o.kind,
      name: o.metadata.name,
      namespace: o.metadata.namespace,
    })),
    trackedGVKs: ['/v1/ConfigMap', '/v1/Secret', '/v1/Service'],
    conditions: CONDITIONS.map((type) => ({
      type,
      status: 'True',
      reason: 'Success',
      message: '',
      lastTransitionTime: now,
      observedGeneration: 1,
    })),
  };
}

/**
 * Creates `size` instances in namespaces `limit-*` (not timed; no operator may be running), then
 * times the essential requests for all of them at `concurrency`. Returns milliseconds.
 */
export async function runLimit(
  cluster: KubeCluster,
  size: number,
  concurrency: number,
): Promise<number> {
  const w = workload(size, 'limit');
  await inParallel(w.namespaces.length, CLIENT_CONCURRENCY, async (n) => {
    await cluster.apply(namespaceObject(w.namespaces[n]!));
  });
  const instances: KubeObject[] = new Array<KubeObject>(size);
  await inParallel(size, CLIENT_CONCURRENCY, async (k) => {
    instances[k] = await cluster.apply(instanceObject(w, k));
  });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const started = performance.now();
  await inParallel(size, concurrency, async (k) => {
    const instance = instances[k]!;
    const objects = renderedObjects(w, k, { uid: instance.metadata.uid ?? '' });
    for (const o of objects) await cluster.apply(o, { dryRun: true });
    for (const o of objects) await cluster.apply(o);
    await cluster.patchStatus(instance, readyStatus(objects, now));
  });
  return performance.now() - started;
}
