// The limit: the fewest requests that converge the same workload — per rendered object one
// server-side dry run and one server-side apply, per instance one status write — sent at the
// operator's concurrency through the same client stack. Stencil's converge time is judged by it.
//
// And the floor: what any operator that keeps SPEC would take, with no cost of its own. It adds
// to the limit what the limit leaves out and SPEC requires: the instances are created inside the
// timed window (as in the converge, by 16 parallel clients), and per instance the Secret is read,
// the ApplySet record is written before anything is applied (SPEC §6, decision 1 of issue #25)
// and one Applied Event is recorded. limit / floor is the best ratio an operator can reach here,
// and floor / converge how near Stencil comes to it. The floor runs on a fresh control plane, as
// the converge does; the limit runs after the converge, on a cluster that holds its objects.
import type { TemplateInstance } from '../src/api/template-instance.ts';
import type { KubeObject } from '../src/api/object-meta.ts';
import { parentRecord } from '../src/engine/objects/applyset.ts';
import type { KubeCluster } from '../src/kube/cluster.ts';
import { ProcessCpu, type CpuShare } from './process-cpu.ts';
import {
  CLIENT_CONCURRENCY,
  inParallel,
  instanceObject,
  namespaceObject,
  prepare,
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
  cpu?: ProcessCpu,
): Promise<Timed> {
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
  const from = cpu?.read();
  await inParallel(size, concurrency, async (k) => {
    const instance = instances[k]!;
    const objects = renderedObjects(w, k, { uid: instance.metadata.uid ?? '' });
    for (const o of objects) await cluster.apply(o, { dryRun: true });
    for (const o of objects) await cluster.apply(o);
    await cluster.patchStatus(instance, readyStatus(objects, now));
  });
  return { ms: performance.now() - started, cpu: ProcessCpu.share(from, cpu?.read(), size) };
}

/** How long a run took, and where its CPU went (absent where /proc cannot be read). */
export interface Timed {
  ms: number;
  cpu?: CpuShare;
}

/**
 * The floor (see the top of this file) for `size` instances in namespaces `floor-*`: namespaces,
 * Secrets and shared ConfigMaps are made first (not timed, as for the converge); then `user`
 * creates the instances while `operator` works through them at `concurrency`. Without
 * `limitRequests`, only what SPEC adds to the limit is sent (the creations, the Secret GET, the
 * record, the Event): `npm run bench:floor` times those alone.
 */
export async function runFloor(
  user: KubeCluster,
  operator: KubeCluster,
  size: number,
  concurrency: number,
  { cpu, limitRequests = true }: { cpu?: ProcessCpu; limitRequests?: boolean } = {},
): Promise<Timed> {
  const w = workload(size, 'floor');
  await prepare(user, w);
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const created = Array.from({ length: size }, () => {
    let resolve!: (instance: KubeObject) => void;
    const promise = new Promise<KubeObject>((r) => (resolve = r));
    return { promise, resolve };
  });
  const started = performance.now();
  const from = cpu?.read();
  await Promise.all([
    inParallel(size, CLIENT_CONCURRENCY, async (k) => {
      created[k]!.resolve(await user.apply(instanceObject(w, k)));
    }),
    inParallel(size, concurrency, async (k) => {
      let instance = await created[k]!.promise;
      const { namespace } = w.instance(k);
      await operator.get({ apiVersion: 'v1', kind: 'Secret', namespace, name: `db-${k}` });
      const objects = renderedObjects(w, k, { uid: instance.metadata.uid ?? '' });
      const record = parentRecord(instance as unknown as TemplateInstance, objects);
      if (record) instance = await operator.patchMetadata(instance, record);
      if (limitRequests) {
        for (const o of objects) await operator.apply(o, { dryRun: true });
        for (const o of objects) await operator.apply(o);
        instance = await operator.patchStatus(instance, readyStatus(objects, now));
      }
      await operator.recordEvent({
        regarding: instance,
        type: 'Normal',
        reason: 'Applied',
        message: `applied ${objects.length} resources`,
      });
    }),
  ]);
  return { ms: performance.now() - started, cpu: ProcessCpu.share(from, cpu?.read(), size) };
}
