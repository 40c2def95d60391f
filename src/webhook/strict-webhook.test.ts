import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/object-meta.ts';
import type { ClusterPort } from '../reconcile/cluster-port.ts';
import { createBundle, type CertificateBundle } from './certificates.ts';
import type { Template, TemplateRevision, TemplateSpec } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import type { CacheReader } from '../reconcile/reader.ts';
import { StrictWebhook, type StrictWebhookOptions } from './strict-webhook.ts';

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
    delete: (id) => {
      writes.push(`delete ${id.kind}`);
      return Promise.resolve('absent');
    },
    patchStatus: refuse('patchStatus'),
    setFinalizers: refuse('setFinalizers'),
    removeAnnotation: refuse('removeAnnotation'),
    patchMetadata: refuse('patchMetadata'),
    patchSpec: refuse('patchSpec'),
    servedVersion: () => Promise.resolve('v1'),
    recordEvent: () => Promise.resolve(),
    identity: () => Promise.resolve('operator'),
    reviewAccess: refuse('reviewAccess'),
    bind: () => port,
    actingAs: () => port,
  };
  return port;
}

/** A webhook on a free loopback port, reached by URL, logging nowhere unless told. */
function loopbackWebhook(
  options: Partial<StrictWebhookOptions> & Pick<StrictWebhookOptions, 'cluster'>,
): StrictWebhook {
  return new StrictWebhook({
    endpoint: { url: 'https://127.0.0.1:0/validate-strict' },
    port: 0,
    host: '127.0.0.1',
    namespace: 'stencil',
    log: () => undefined,
    ...options,
  });
}

/** A serving certificate for 127.0.0.1 in a directory, as cert-manager mounts one. */
function mountedCertificate(): { dir: string; bundle: CertificateBundle } {
  const bundle = createBundle(['127.0.0.1'], new Date());
  const dir = mkdtempSync(join(tmpdir(), 'stencil-certs-'));
  writeFileSync(join(dir, 'tls.crt'), bundle.cert);
  writeFileSync(join(dir, 'tls.key'), bundle.key);
  return { dir, bundle };
}

interface ReviewAnswer {
  response: { allowed: boolean; uid: string; patchType?: string; patch?: string };
}

function review(
  port: number,
  ca: string,
  userInfo: { username: string; groups?: string[] } = { username: 'alice' },
): Promise<ReviewAnswer> {
  return post(port, ca, '/validate-strict', {
    uid: 'r1',
    operation: 'DELETE',
    userInfo,
    name: 'x',
    oldObject: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } },
  });
}

/** One AdmissionReview with `admission` as its request, posted to `path`. */
function post(port: number, ca: string, path: string, admission: object): Promise<ReviewAnswer> {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: admission,
  });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        ca,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(JSON.parse(text) as ReviewAnswer));
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
    const webhook = loopbackWebhook({
      cluster: recordingCluster(writes),
      certDir: dir,
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
    const webhook = loopbackWebhook({
      cluster: recordingCluster(writes),
    });
    await webhook.start('operator');
    await webhook.stop();
    // Not in requester mode: a requester configuration left from before is removed.
    expect(writes).toEqual([
      'apply Secret',
      'apply ValidatingWebhookConfiguration',
      'delete MutatingWebhookConfiguration',
    ]);
  });

  it('sets only the caBundle of configurations the install owns, creating and deleting none', async () => {
    for (const requester of [false, true]) {
      const writes: string[] = [];
      const applied: KubeObject[] = [];
      const webhook = loopbackWebhook({
        cluster: recordingCluster(writes),
        configurations: 'install',
        requester,
        caBundleWriter: {
          apply: (o: KubeObject) => {
            applied.push(o);
            return Promise.resolve(o);
          },
        },
      });
      await webhook.start('operator');
      await webhook.stop();
      // The Secret through the operator's own field manager; nothing else through it.
      expect(writes).toEqual(['apply Secret']);
      expect(applied.map((o) => `${o.kind} ${o.metadata.name}`)).toEqual([
        'ValidatingWebhookConfiguration stencil-strict',
        ...(requester ? ['MutatingWebhookConfiguration stencil-requester'] : []),
      ]);
      // Each names its webhook and carries the caBundle and nothing more.
      for (const o of applied) {
        const { webhooks } = o as unknown as { webhooks: Record<string, unknown>[] };
        expect(webhooks).toHaveLength(1);
        expect(Object.keys(webhooks[0]!).sort()).toEqual(['clientConfig', 'name']);
        expect(Object.keys(webhooks[0]!.clientConfig as object)).toEqual(['caBundle']);
      }
    }
  });

  it('keeps serving when a configuration the install owns is missing, and says which', async () => {
    const logs: string[] = [];
    const webhook = loopbackWebhook({
      cluster: recordingCluster([]),
      configurations: 'install',
      caBundleWriter: { apply: () => Promise.reject(new Error('the object is invalid')) },
      log: (level, message, fields) => logs.push(`${level} ${message} ${JSON.stringify(fields)}`),
    });
    await webhook.start('operator');
    await webhook.stop();
    expect(logs.filter((l) => l.startsWith('warn'))).toEqual([
      expect.stringMatching(/caBundle .*"name":"stencil-strict"/),
    ]);
  });

  it('keeps the requester configuration in requester mode and records the creator', async () => {
    const writes: string[] = [];
    const { dir, bundle } = mountedCertificate();
    const webhook = loopbackWebhook({
      cluster: recordingCluster(writes),
      requester: true,
    });
    await webhook.start('operator');
    await webhook.stop();
    expect(writes).toEqual([
      'apply Secret',
      'apply ValidatingWebhookConfiguration',
      'apply MutatingWebhookConfiguration',
    ]);
    const served = loopbackWebhook({
      cluster: recordingCluster([]),
      certDir: dir,
      requester: true,
    });
    await served.start('operator');
    try {
      const answer = await post(served.port, bundle.caCert, '/mutate-requester', {
        uid: 'r2',
        operation: 'CREATE',
        userInfo: { username: 'alice', groups: ['team-a'] },
        object: { apiVersion: 'stencil.dev/v1alpha1', kind: 'TemplateInstance', metadata: {} },
      });
      expect(answer.response).toMatchObject({ uid: 'r2', allowed: true, patchType: 'JSONPatch' });
      const patch = JSON.parse(Buffer.from(answer.response.patch ?? '', 'base64').toString());
      expect(patch).toEqual([
        {
          op: 'add',
          path: '/metadata/annotations',
          value: { 'stencil.dev/requester': '{"username":"alice","groups":["team-a"]}' },
        },
      ]);
    } finally {
      await served.stop();
    }
  });
});

describe('the strict webhook and who may bypass it', () => {
  it('refuses to start without knowing the operator username', async () => {
    const webhook = loopbackWebhook({
      cluster: recordingCluster([]),
    });
    await expect(webhook.start('')).rejects.toThrow(/did not say who the operator is/);
    await webhook.stop();
  });

  it('logs each change let through by a break-glass group, with the user and the group', async () => {
    const logged: { message: string; fields?: Record<string, unknown> }[] = [];
    const { dir, bundle } = mountedCertificate();
    const webhook = loopbackWebhook({
      cluster: recordingCluster([]),
      certDir: dir,
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

describe('the strict webhook during a progressive rollout (issue #23 defect 3)', () => {
  // Revision 1 lets others change data.note; revision 2, the live spec, no longer does. The
  // instance has not been moved yet: its objects are still revision 1's, and so are its rules.
  const content = (ignoreFields: string[]): TemplateSpec => ({
    sync: { mode: 'strict', ignoreFields },
    handlebars: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n',
  });
  const live: Template = {
    apiVersion: 'stencil.dev/v1alpha1',
    kind: 'Template',
    metadata: { name: 'app', namespace: 'platform' },
    spec: {
      ...content([]),
      rollout: { strategy: 'Progressive', stages: [{ name: 'canary' }] },
    },
    status: {
      latestRevision: 2,
      rollout: { revision: 2, stableRevision: 1, stage: 0, admitted: 0, phase: 'Progressing' },
    },
  };
  const revision = (n: number, ignoreFields: string[]): TemplateRevision => ({
    apiVersion: 'stencil.dev/v1alpha1',
    kind: 'TemplateRevision',
    metadata: { name: `app-${n}`, namespace: 'platform' },
    spec: { template: 'app', revision: n, hash: `h${n}`, content: content(ignoreFields) },
  });
  const instance = {
    apiVersion: 'stencil.dev/v1alpha1',
    kind: 'TemplateInstance',
    metadata: {
      name: 'shop',
      namespace: 'team-a',
      uid: 'u-1',
      creationTimestamp: '2026-01-01T00:00:00Z',
    },
    spec: { templateRef: { name: 'app', namespace: 'platform' } },
    status: { revision: 1, phase: 'Ready', observedGeneration: 1 },
  };
  const cache: CacheReader = {
    namespaceLabels: () => ({}),
    instance: () => instance as unknown as TemplateInstance,
    instancesOf: () => [instance as unknown as TemplateInstance],
    templates: () => [live],
    template: () => live,
    revisionsOf: () => [revision(1, ['data.note']), revision(2, [])],
  };
  const configMap = (note: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'x',
      namespace: 'team-a',
      labels: { 'stencil.dev/sync-mode': 'strict' },
      annotations: { 'stencil.dev/instance-ref': 'team-a/shop' },
    },
    data: { note },
  });

  it('judges an edit by the rules of the revision the instance is on, not the live spec', async () => {
    const { dir, bundle } = mountedCertificate();
    const port = recordingCluster([]);
    const cluster: ClusterPort = {
      ...port,
      get: (id) =>
        Promise.resolve(
          id.kind === 'TemplateInstance' ? (instance as unknown as KubeObject) : undefined,
        ),
    };
    const webhook = loopbackWebhook({
      cluster,
      cache,
      certDir: dir,
    });
    await webhook.start('operator');
    try {
      const answer = await post(webhook.port, bundle.caCert, '/validate-strict', {
        uid: 'r3',
        operation: 'UPDATE',
        userInfo: { username: 'alice' },
        name: 'x',
        namespace: 'team-a',
        oldObject: configMap('a'),
        object: configMap('b'),
      });
      expect(answer.response).toMatchObject({ uid: 'r3', allowed: true });
    } finally {
      await webhook.stop();
    }
  });
});
