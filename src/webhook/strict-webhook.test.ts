import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/object-meta.ts';
import type { ClusterPort } from '../reconcile/cluster-port.ts';
import { createBundle, type CertificateBundle } from './certificates.ts';
import { StrictWebhook } from './strict-webhook.ts';

/** A cluster with no objects that records every write. */
function recordingCluster(writes: string[]): ClusterPort {
  const refuse = (what: string) => (): Promise<never> => {
    writes.push(what);
    return Promise.reject(new Error(`unexpected ${what}`));
  };
  const port: ClusterPort = {
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
    removeAnnotation: refuse('removeAnnotation'),
    recordEvent: () => Promise.resolve(),
    identity: () => Promise.resolve('operator'),
    bind: () => port,
  };
  return port;
}

/** A serving certificate for 127.0.0.1 in a directory, as cert-manager mounts one. */
function mountedCertificate(): { dir: string; bundle: CertificateBundle } {
  const bundle = createBundle(['127.0.0.1'], new Date());
  const dir = mkdtempSync(join(tmpdir(), 'stencil-certs-'));
  writeFileSync(join(dir, 'tls.crt'), bundle.cert);
  writeFileSync(join(dir, 'tls.key'), bundle.key);
  return { dir, bundle };
}

function review(
  port: number,
  ca: string,
  userInfo: { username: string; groups?: string[] } = { username: 'alice' },
): Promise<{ response: { allowed: boolean; uid: string } }> {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'r1',
      operation: 'DELETE',
      userInfo,
      name: 'x',
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
    const { dir, bundle } = mountedCertificate();
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

describe('the strict webhook and who may bypass it', () => {
  it('refuses to start without knowing the operator username', async () => {
    const webhook = new StrictWebhook({
      cluster: recordingCluster([]),
      endpoint: { url: 'https://127.0.0.1:0/validate-strict' },
      port: 0,
      host: '127.0.0.1',
      namespace: 'stencil',
      log: () => undefined,
    });
    await expect(webhook.start('')).rejects.toThrow(/did not say who the operator is/);
    await webhook.stop();
  });

  it('logs each change let through by a break-glass group, with the user and the group', async () => {
    const logged: { message: string; fields?: Record<string, unknown> }[] = [];
    const { dir, bundle } = mountedCertificate();
    const webhook = new StrictWebhook({
      cluster: recordingCluster([]),
      certDir: dir,
      endpoint: { url: 'https://127.0.0.1:0/validate-strict' },
      port: 0,
      host: '127.0.0.1',
      namespace: 'stencil',
      breakGlassGroups: ['sre'],
      log: (_level, message, fields) => logged.push({ message, fields }),
    });
    await webhook.start('system:serviceaccount:stencil:stencil');
    try {
      const answer = await review(webhook.port, bundle.caCert, {
        username: 'bob',
        groups: ['sre'],
      });
      expect(answer.response.allowed).toBe(true);
      expect(logged).toContainEqual({
        message: 'strict mode bypassed by a break-glass group',
        fields: expect.objectContaining({ user: 'bob', group: 'sre', operation: 'DELETE' }),
      });
    } finally {
      await webhook.stop();
    }
  });
});
