// The applier on the real API server (issue #23, defect 7): a pass that stops at a wave gate
// counts as unchanged only the objects it reached, never those of the waves it did not. Rendered
// objects are dry-run and applied with fieldValidation=Strict (issue #26, ADR 0030).
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import { LABEL_INSTANCE_UID } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { AppliedMemo } from '../../src/reconcile/instance/applied-memo.ts';
import { applyResources } from '../../src/reconcile/instance/applier.ts';
import { configMap } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { userClient } from './support/operator.ts';

let ns: string;
let cluster: KubeCluster;
/** The PATCHes the user's client sent: path, and the fieldValidation and dryRun they carried. */
const patches: string[] = [];
const owner = { name: 'waves', namespace: '', uid: 'applier-test-uid' };

/** An object as the engine renders it for `owner`: labelled with the instance uid. */
function labelled(object: KubeObject): KubeObject {
  return {
    ...object,
    metadata: { ...object.metadata, namespace: ns, labels: { [LABEL_INSTANCE_UID]: owner.uid } },
  };
}

beforeAll(async () => {
  ns = await freshNamespace(connect(), 'applier');
  owner.namespace = ns;
  const client = await userClient();
  cluster = client.cluster;
  client.connection.http.onRequest((method, path, dryRun, _status, query) => {
    if (method === 'PATCH')
      patches.push(`${path} ${query.get('fieldValidation') ?? '-'}${dryRun ? ' (dry run)' : ''}`);
  });
});

describe('what a pass counts as unchanged', () => {
  it('counts only the objects reached before a wave gate stopped it', async () => {
    // Wave 0: a claim that stays Pending (no provisioner here); wave 1: two ConfigMaps.
    const claim = labelled({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    const wave1 = { annotations: { 'stencil.dev/wave': '1' } };
    const rendered = [
      claim,
      labelled(configMap(ns, 'a', { v: 'a' }, wave1)),
      labelled(configMap(ns, 'b', { v: 'b' }, wave1)),
    ];
    const memo = new AppliedMemo();
    const first = await applyResources(cluster, { owner, rendered, memo });
    expect(first).toMatchObject({ ok: false, waiting: true, unchanged: 0 });
    expect(first.ok === false && first.waiting && first.written.map((o) => o.kind)).toEqual([
      'PersistentVolumeClaim',
    ]);
    // Again: the claim is as rendered, the ConfigMaps were never reached.
    const second = await applyResources(cluster, { owner, rendered, memo });
    expect(second).toMatchObject({ ok: false, waiting: true, unchanged: 1, written: [] });
  });
});

describe('strict field validation of rendered objects', () => {
  /** A Deployment named `name` whose pod spec has `extra` beside its container. */
  function deployment(name: string, extra: Record<string, unknown> = {}): KubeObject {
    const labels = { app: name };
    return labelled({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name },
      spec: {
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ name: 'app', image: 'nginx:1.27' }], ...extra },
        },
      },
    });
  }

  it('dry runs and applies alike carry fieldValidation=Strict', async () => {
    patches.length = 0;
    const rendered = [labelled(configMap(ns, 'strict-ok', { v: '1' })), deployment('strict-ok')];
    const result = await applyResources(cluster, { owner, rendered });
    expect(result).toMatchObject({ ok: true });
    expect(patches.sort()).toEqual([
      `/api/v1/namespaces/${ns}/configmaps/strict-ok Strict`,
      `/api/v1/namespaces/${ns}/configmaps/strict-ok Strict (dry run)`,
      `/apis/apps/v1/namespaces/${ns}/deployments/strict-ok Strict`,
      `/apis/apps/v1/namespaces/${ns}/deployments/strict-ok Strict (dry run)`,
    ]);
  });

  it('an unknown field fails the dry run, naming the object and the field; nothing is written', async () => {
    patches.length = 0;
    const before = await cluster.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: ns,
      name: 'strict-ok',
    });
    const rendered = [
      labelled(configMap(ns, 'strict-ok', { v: '2' })),
      labelled(configMap(ns, 'strict-new', { v: '1' })),
      deployment('strict-ok', { dnsPolicyy: 'ClusterFirst' }),
    ];
    const result = await applyResources(cluster, { owner, rendered });
    expect(result.ok).toBe(false);
    const message = result.ok ? '' : result.message;
    expect(message).toContain(`Deployment ${ns}/strict-ok rejected by the API server (dry run)`);
    expect(message).toContain('.spec.template.spec.dnsPolicyy: field not declared in schema');
    // Only dry runs went out: the ConfigMaps are as they were, or still absent.
    expect(patches.every((p) => p.endsWith('Strict (dry run)'))).toBe(true);
    const after = await cluster.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: ns,
      name: 'strict-ok',
    });
    expect(after?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
    expect(
      await cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'strict-new' }),
    ).toBeUndefined();
  });
});
