import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/object-meta.ts';
import type { ClusterPort } from '../reconcile/cluster-port.ts';
import { createBundle } from './certificates.ts';
import { StrictWebhook } from './strict-webhook.ts';

/** A cluster with no objects that records every write. */
function recordingCluster(writes: string[]): ClusterPort {
  const refuse = (what: string) => (): Promise<never> => {
    writes.push(what);
    return Promise.reject(new Error(`unexpected ${what}`));
  };
  return {
    scopeOf: () => Promise.resolve('Namespaced'),
    get: () => Promise.resolve(undefined),
    list: () => Promise.resolve([]),
    apply: (o: KubeObject) => {
      writes.push(`apply ${o.kind}`);
      return Promise.resolve(o);
    },
    delete: refuse('delete'),
    patchStatus: refuse('patchStatus'),
    setFinalizers: refuse('setFinalizers'),
    recordEvent: () => Promise.resolve(),
    identity: () => Promise.resolve('operator'),
  };
}

function review(
  port: number,
  ca: string,
): Promise<{ response: { allowed: boolean; uid: string } }> {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'r1',
      operation: 'DELETE',
      userInfo: { username: 'alice' },
      oldObject: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } },
    },
  });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/validate-strict',
        method: 'POST',
        ca,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () =>
          resolve(JSON.parse(text) as { response: { allowed: boolean; uid: string } }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the strict webhook with a mounted certificate (cert-manager)', () => {
  it('serves the mounted certificate and leaves the Secret and the configuration alone', async () => {
    const bundle = createBundle(['127.0.0.1'], new Date());
    const dir = mkdtempSync(join(tmpdir(), 'stencil-certs-'));
    writeFileSync(join(dir, 'tls.crt'), bundle.cert);
    writeFileSync(join(dir, 'tls.key'), bundle.key);
    const writes: string[] = [];
    const webhook = new StrictWebhook({
      cluster: recordingCluster(writes),
      endpoint: { url: 'https://127.0.0.1:0/validate-strict' },
      port: 0,
      host: '127.0.0.1',
      namespace: 'stencil',
      certDir: dir,
      log: () => undefined,
    });
    await webhook.start('operator');
    try {
      const answer = await review(webhook.port, bundle.caCert);
      expect(answer.response).toMatchObject({ uid: 'r1', allowed: true });
      expect(writes).toEqual([]);
    } finally {
      await webhook.stop();
    }
  });

  it('issues its own certificate and configuration without one', async () => {
    const writes: string[] = [];
    const webhook = new StrictWebhook({
      cluster: recordingCluster(writes),
      endpoint: { url: 'https://127.0.0.1:0/validate-strict' },
      port: 0,
      host: '127.0.0.1',
      namespace: 'stencil',
      log: () => undefined,
    });
    await webhook.start('operator');
    await webhook.stop();
    expect(writes).toEqual(['apply Secret', 'apply ValidatingWebhookConfiguration']);
  });
});
