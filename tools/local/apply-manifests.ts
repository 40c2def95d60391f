// Applies YAML manifests to a cluster with server-side apply (field manager `stencil`), in
// install order with Namespaces first; used by `npm run local` and the scenario tests.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../src/api/object-meta.ts';
import type { Template } from '../../src/api/template.ts';
import { isClusterError } from '../../src/reconcile/cluster-port.ts';
import { sortForInstall } from '../../src/engine/objects/inventory.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';

/**
 * The files of every sample under `samplesDir`, in the order they are applied: the objects it
 * needs (namespaces, sources), the ServiceAccount its Template acts as with that account's
 * Roles (ADR 0035), the Template, the instance.
 */
export function sampleFiles(samplesDir: string): string[] {
  return readdirSync(samplesDir)
    .sort()
    .flatMap((sample) =>
      ['objects.yaml', 'rbac.yaml', 'template.yaml', 'instance.yaml']
        .map((file) => join(samplesDir, sample, file))
        .filter((file) => existsSync(file)),
    );
}

export function readManifests(files: string[]): KubeObject[] {
  return files.flatMap((file) =>
    parseAllDocuments(readFileSync(file, 'utf8'), { version: '1.1' })
      .map((doc) => doc.toJS() as KubeObject | null)
      .filter((o): o is KubeObject => o !== null && typeof o === 'object'),
  );
}

const INSTANCE_KINDS = ['TemplateInstance', 'TemplateInstanceSet'];

/** `apiVersion kind` of each kind the Templates among `objects` publish (spec.api, ADR 0032). */
function publishedKinds(objects: KubeObject[]): Set<string> {
  return new Set(
    objects
      .filter((o) => o.kind === 'Template')
      .map((o) => (o as unknown as Template).spec.api)
      .filter((api) => api !== undefined)
      .map((api) => `${api.group}/${api.version} ${api.kind}`),
  );
}

/**
 * `--api-groups` allowing exactly what the Templates among `objects` publish, each for its own
 * namespace, and those groups (empty when none publishes a kind): what a playground or a test of
 * the samples runs with.
 */
export function apiGroupsFor(objects: KubeObject[]): { flag: string; groups: string[] } {
  const groups = new Map<string, Set<string>>();
  for (const o of objects.filter((t) => t.kind === 'Template')) {
    const api = (o as unknown as Template).spec.api;
    const namespace = o.metadata.namespace ?? 'default';
    if (api) groups.set(namespace, (groups.get(namespace) ?? new Set()).add(api.group));
  }
  return {
    flag: [...groups].map(([ns, g]) => `${ns}=${[...g].join(',')}`).join(';'),
    groups: [...new Set([...groups.values()].flatMap((g) => [...g]))],
  };
}

/**
 * `objects` split into the objects of kinds their Templates publish and the rest: the first can
 * be applied only once an operator runs and has published their kinds.
 */
export function splitPublished(objects: KubeObject[]): {
  published: KubeObject[];
  rest: KubeObject[];
} {
  const typed = publishedKinds(objects);
  const isTyped = (o: KubeObject): boolean => typed.has(`${o.apiVersion} ${o.kind}`);
  // The Templates go with the published objects too: applyManifests tells them apart by them.
  return {
    published: objects.filter((o) => isTyped(o) || o.kind === 'Template'),
    rest: objects.filter((o) => !isTyped(o)),
  };
}

/** How long an object of a published kind is retried while the operator publishes its CRD. */
const PUBLISH_WAIT_MS = 60_000;

/**
 * Applies `objects`: plain Kubernetes objects first (in install order), then Templates, then
 * instances and TemplateInstanceSets, then the objects of kinds those Templates publish, each
 * retried until the operator has published its kind.
 */
export async function applyManifests(cluster: KubeCluster, objects: KubeObject[]): Promise<void> {
  const typed = publishedKinds(objects);
  const stage = (o: KubeObject): number =>
    typed.has(`${o.apiVersion} ${o.kind}`)
      ? 3
      : o.kind === 'Template'
        ? 1
        : INSTANCE_KINDS.includes(o.kind)
          ? 2
          : 0;
  const ordered = [
    ...sortForInstall(objects.filter((o) => stage(o) === 0)),
    ...[1, 2, 3].flatMap((n) => objects.filter((o) => stage(o) === n)),
  ];
  const seen = new Set<string>();
  for (const object of ordered) {
    const key = `${object.apiVersion}/${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const { status: _status, ...body } = object as KubeObject & { status?: unknown };
    if (stage(object) === 3) await applyOnceServed(cluster, body);
    else await cluster.apply(body);
  }
}

async function applyOnceServed(cluster: KubeCluster, object: KubeObject): Promise<void> {
  const deadline = Date.now() + PUBLISH_WAIT_MS;
  for (;;) {
    try {
      await cluster.apply(object);
      return;
    } catch (error) {
      if (!isClusterError(error, 'NotServed') || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
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
