// Applies YAML manifests to a cluster with server-side apply (field manager `stencil`), in
// install order with Namespaces first; used by `npm run local` and the scenario tests.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../src/api/object-meta.ts';
import { sortForInstall } from '../../src/engine/objects/inventory.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';

export function readManifests(files: string[]): KubeObject[] {
  return files.flatMap((file) =>
    parseAllDocuments(readFileSync(file, 'utf8'), { version: '1.1' })
      .map((doc) => doc.toJS() as KubeObject | null)
      .filter((o): o is KubeObject => o !== null && typeof o === 'object'),
  );
}

const INSTANCE_KINDS = ['TemplateInstance', 'TemplateInstanceSet'];

/**
 * Applies `objects`: plain Kubernetes objects first (in install order), then Templates, then
 * instances and TemplateInstanceSets.
 */
export async function applyManifests(cluster: KubeCluster, objects: KubeObject[]): Promise<void> {
  const stage = (o: KubeObject): number =>
    o.kind === 'Template' ? 1 : INSTANCE_KINDS.includes(o.kind) ? 2 : 0;
  const ordered = [
    ...sortForInstall(objects.filter((o) => stage(o) === 0)),
    ...objects.filter((o) => stage(o) === 1),
    ...objects.filter((o) => stage(o) === 2),
  ];
  const seen = new Set<string>();
  for (const object of ordered) {
    const key = `${object.apiVersion}/${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const { status: _status, ...body } = object as KubeObject & { status?: unknown };
    await cluster.apply(body);
  }
}

/**
 * How far a sample's instance.yaml object got: a TemplateInstance's phase, or for a
 * TemplateInstanceSet `Ready` once its Ready condition is True (every stamped instance Ready),
 * else its counts; `Pending` when it does not exist (yet).
 */
export async function samplePhase(cluster: KubeCluster, manifest: KubeObject): Promise<string> {
  const live = (await cluster.get({
    apiVersion: manifest.apiVersion,
    kind: manifest.kind,
    name: manifest.metadata.name!,
    namespace: manifest.metadata.namespace,
  })) as { status?: SampleStatus } | undefined;
  const status = live?.status;
  if (manifest.kind !== 'TemplateInstanceSet') return status?.phase ?? 'Pending';
  const ready = status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status === 'True' && (status?.desired ?? 0) > 0) return 'Ready';
  return status ? `${status.ready ?? 0}/${status.desired ?? 0} Ready` : 'Pending';
}

interface SampleStatus {
  phase?: string;
  desired?: number;
  ready?: number;
  conditions?: { type: string; status: string }[];
}
