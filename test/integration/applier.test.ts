// The applier on the real API server (issue #23, defect 7): a pass that stops at a wave gate
// counts as unchanged only the objects it reached, never those of the waves it did not.
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
  cluster = (await userClient()).cluster;
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
