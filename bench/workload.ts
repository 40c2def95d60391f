// The scale workload of issue #10: one revert Template of three objects (Secret, ConfigMap,
// Service); each instance reads its own Secret key and one ConfigMap key shared by every instance
// of its namespace; instances spread over (at most) 50 namespaces.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../src/api/object-meta.ts';
import { API_VERSION } from '../src/api/well-known.ts';
import type { KubeCluster } from '../src/kube/cluster.ts';
import { object } from './support.ts';

export const TEMPLATE_NAMESPACE = 'bench-templates';
export const MAX_NAMESPACES = 50;
/** The parallel client that creates instances (and the set-up objects) sends this many at once. */
export const CLIENT_CONCURRENCY = 16;

const BODY = `apiVersion: v1
kind: Secret
metadata:
  name: {{instance.name}}
data:
  password: {{b64enc parameters.password}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}
data:
  shared: {{quote parameters.shared}}
  passwordHash: {{quote (sha256 parameters.password)}}
---
apiVersion: v1
kind: Service
metadata:
  name: {{instance.name}}
spec:
  ports: [{port: 80}]
`;

export interface Workload {
  size: number;
  namespaces: string[];
  /** Instance k: its namespace and name (its Secret is `db-<k>`). */
  instance(k: number): { namespace: string; name: string };
}

export function workload(size: number, prefix = 'bench'): Workload {
  const count = Math.min(MAX_NAMESPACES, size);
  const namespaces = Array.from({ length: count }, (_, n) => `${prefix}-${n}`);
  return {
    size,
    namespaces,
    instance: (k) => ({ namespace: namespaces[k % count]!, name: `app-${k}` }),
  };
}

/** Runs `task` over 0..count-1 with at most `concurrency` in flight. */
export async function inParallel(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

export const passwordHash = (password: string): string =>
  createHash('sha256').update(password).digest('hex');

export const namespaceObject = (name: string): KubeObject =>
  object({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

export const sharedConfigMap = (namespace: string, setting: string): KubeObject =>
  object({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'shared', namespace },
    data: { setting },
  });

export const passwordSecret = (namespace: string, k: number, password: string): KubeObject =>
  object({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `db-${k}`, namespace },
    stringData: { password },
  });

export function instanceObject(w: Workload, k: number): KubeObject {
  const { namespace, name } = w.instance(k);
  return object({
    apiVersion: API_VERSION,
    kind: 'TemplateInstance',
    metadata: { name, namespace },
    spec: {
      templateRef: { name: 'app', namespace: TEMPLATE_NAMESPACE },
      parameters: [
        { name: 'password', valueFrom: { secretKeyRef: { name: `db-${k}`, key: 'password' } } },
        { name: 'shared', valueFrom: { configMapKeyRef: { name: 'shared', key: 'setting' } } },
      ],
    },
  });
}

/** Namespaces, the Template, the shared ConfigMaps and one Secret per instance: not timed. */
export async function prepare(user: KubeCluster, w: Workload): Promise<void> {
  await user.apply(namespaceObject(TEMPLATE_NAMESPACE));
  await user.apply(
    object({
      apiVersion: API_VERSION,
      kind: 'Template',
      metadata: { name: 'app', namespace: TEMPLATE_NAMESPACE },
      spec: {
        sync: { mode: 'revert' },
        targetNamespaces: { explicit: { allow: { literal: ['*'] } } },
        parameters: [{ name: 'password' }, { name: 'shared' }],
        handlebars: BODY,
      },
    }),
  );
  await prepareSources(user, w);
}

/** The namespaces, their shared ConfigMaps and one Secret per instance (any operator's). */
export async function prepareSources(user: KubeCluster, w: Workload): Promise<void> {
  await inParallel(w.namespaces.length, CLIENT_CONCURRENCY, async (n) => {
    await user.apply(namespaceObject(w.namespaces[n]!));
    await user.apply(sharedConfigMap(w.namespaces[n]!, 'v0'));
  });
  await inParallel(w.size, CLIENT_CONCURRENCY, async (k) => {
    await user.apply(passwordSecret(w.instance(k).namespace, k, `p-${k}`));
  });
}

/** The rendered objects of instance k, as the operator would apply them (for the limit script). */
export function renderedObjects(w: Workload, k: number, owner: { uid: string }): KubeObject[] {
  const { namespace, name } = w.instance(k);
  const metadata = {
    name,
    namespace,
    labels: {
      'stencil.dev/instance-uid': owner.uid,
      'stencil.dev/instance-name': name,
      'stencil.dev/instance-namespace': namespace,
      'stencil.dev/sync-mode': 'revert',
    },
    annotations: { 'stencil.dev/instance-ref': `${namespace}/${name}` },
    ownerReferences: [
      { apiVersion: API_VERSION, kind: 'TemplateInstance', name, uid: owner.uid, controller: true },
    ],
  };
  const password = `p-${k}`;
  return [
    object({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata,
      data: { password: Buffer.from(password).toString('base64') },
    }),
    object({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata,
      data: { shared: 'v0', passwordHash: passwordHash(password) },
    }),
    object({ apiVersion: 'v1', kind: 'Service', metadata, spec: { ports: [{ port: 80 }] } }),
  ];
}
