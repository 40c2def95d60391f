// What ClusterSchemas asks the API server, and when: the discovery document at most every refresh,
// a group-version's document once per hash and only when a render needs it, and offline checks
// (said once) when `/openapi/v3` cannot be read. The real API server: test/integration/cluster-schemas.test.ts.
import { describe, expect, it } from 'vitest';
import { KubernetesSchemas } from '../engine/object-schema/kubernetes-schemas.ts';
import { OfflineSchemas } from '../engine/object-schema/object-schema.ts';
import { schemaFileReader } from '../kubernetes-schema-files.ts';
import { ClusterError } from '../reconcile/cluster-port.ts';
import { ClusterSchemas, type SchemaHttp } from './cluster-schemas.ts';
import type { RequestSpec } from './http.ts';

const offline = new OfflineSchemas(new KubernetesSchemas(schemaFileReader()));

const CONFIG_MAP = {
  components: {
    schemas: {
      'io.k8s.api.core.v1.ConfigMap': {
        type: 'object',
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { type: 'object', additionalProperties: {} },
          data: { type: 'object', additionalProperties: { type: 'string' } },
        },
        'x-kubernetes-group-version-kind': [{ group: '', version: 'v1', kind: 'ConfigMap' }],
      },
    },
  },
};

/** An API server that publishes `v1` and `apps/v1` (empty), under hashes a test may change. */
class FakeServer implements SchemaHttp {
  readonly sent: string[] = [];
  hashes: Record<string, string> = { 'api/v1': 'A1', 'apis/apps/v1': 'B1' };
  failure: ClusterError | undefined;

  request<T>(spec: RequestSpec): Promise<T> {
    const hash = spec.query?.hash;
    this.sent.push(hash ? `${spec.path}?hash=${hash}` : spec.path);
    if (this.failure) return Promise.reject(this.failure);
    if (spec.path === '/openapi/v3') {
      const paths = Object.fromEntries(
        Object.entries(this.hashes).map(([path, h]) => [
          path,
          { serverRelativeURL: `/openapi/v3/${path}?hash=${h}` },
        ]),
      );
      return Promise.resolve({ paths } as T);
    }
    const path = spec.path.replace('/openapi/v3/', '');
    if (this.hashes[path] !== hash) {
      return Promise.reject(new ClusterError('Other', 'moved permanently', 301));
    }
    return Promise.resolve((path === 'api/v1' ? CONFIG_MAP : { components: {} }) as T);
  }
}

function setUp(): {
  server: FakeServer;
  schemas: ClusterSchemas;
  clock: { now: number };
  logs: string[];
} {
  const server = new FakeServer();
  const clock = { now: 0 };
  const logs: string[] = [];
  const schemas = new ClusterSchemas(server, offline, {
    refreshMs: 30_000,
    missingRefreshMs: 5_000,
    unavailableRetryMs: 600_000,
    now: () => clock.now,
    log: (level, message) => logs.push(`${level}: ${message}`),
  });
  return { server, schemas, clock, logs };
}

const configMap = (data: unknown): unknown => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c' },
  data,
});

describe('ClusterSchemas', () => {
  it('reads discovery once, and only the documents asked for, once per hash', async () => {
    const { server, schemas, clock } = setUp();
    await schemas.schemas.prepare([{ apiVersion: 'v1', kind: 'ConfigMap' }]);
    expect(server.sent).toEqual(['/openapi/v3', '/openapi/v3/api/v1?hash=A1']);
    const verdict = schemas.schemas.check(configMap({ a: 1 }));
    expect(verdict.checked && verdict.problems.map((p) => p.path)).toEqual(['data.a']);
    server.sent.length = 0;
    clock.now = 29_000;
    await Promise.all([schemas.documents(['v1']), schemas.documents(['v1'])]);
    expect(server.sent).toEqual([]);
    // After the refresh interval: discovery again; the unchanged document is not read again.
    clock.now = 31_000;
    await schemas.documents(['v1']);
    expect(server.sent).toEqual(['/openapi/v3']);
    // A new hash (a CRD of the group changed): that document once more, whoever asks.
    server.hashes['api/v1'] = 'A2';
    clock.now = 62_000;
    await Promise.all([schemas.documents(['v1']), schemas.documents(['v1', 'apps/v1'])]);
    expect(server.sent).toEqual([
      '/openapi/v3',
      '/openapi/v3',
      '/openapi/v3/api/v1?hash=A2',
      '/openapi/v3/apis/apps/v1?hash=B1',
    ]);
    expect(schemas.fetched).toBe(3);
  });

  it('a group-version discovery lacks (a CRD just installed) has it read again, at most every few seconds', async () => {
    const { server, schemas, clock } = setUp();
    await schemas.documents(['example.com/v1']);
    clock.now = 4_000;
    // Not served: its objects are checked offline.
    expect((await schemas.documents(['example.com/v1'])).get('example.com/v1')).toBeUndefined();
    expect(server.sent).toEqual(['/openapi/v3']);
    server.hashes['apis/example.com/v1'] = 'C1';
    clock.now = 6_000;
    await schemas.documents(['example.com/v1']);
    expect(server.sent).toEqual([
      '/openapi/v3',
      '/openapi/v3',
      '/openapi/v3/apis/example.com/v1?hash=C1',
    ]);
  });

  it('asks nothing for what is not an apiVersion (a placeholder of the Template check)', async () => {
    const { server, schemas } = setUp();
    await schemas.documents(['v1']);
    server.sent.length = 0;
    const documents = await schemas.documents(['<apiVersion>', '']);
    expect(server.sent).toEqual([]);
    expect([...documents.keys()]).toEqual(['v1']);
  });

  it('a document whose hash changed since discovery was read has discovery read again soon', async () => {
    const { server, schemas, clock } = setUp();
    await schemas.documents([]);
    server.hashes['api/v1'] = 'A2';
    // Asked for at the old hash, the server redirects: not held, its objects checked offline.
    expect((await schemas.documents(['v1'])).get('v1')).toBeUndefined();
    clock.now = 6_000;
    server.sent.length = 0;
    expect((await schemas.documents(['v1'])).get('v1')?.kinds.has('ConfigMap')).toBe(true);
    expect(server.sent).toEqual(['/openapi/v3', '/openapi/v3/api/v1?hash=A2']);
  });

  it('when /openapi/v3 is refused, checks offline, says so once, and asks again much later', async () => {
    const { server, schemas, clock, logs } = setUp();
    server.failure = new ClusterError('Forbidden', 'forbidden', 403);
    await schemas.schemas.prepare([{ apiVersion: 'v1', kind: 'ConfigMap' }]);
    // Checked offline, against the bundle's ConfigMap.
    const verdict = schemas.schemas.check(configMap({ a: 1 }));
    expect(verdict.checked && verdict.problems.map((p) => p.path)).toEqual(['data.a']);
    clock.now = 300_000;
    await schemas.documents(['v1', 'apps/v1']);
    expect(server.sent).toEqual(['/openapi/v3']);
    expect(logs).toEqual([
      'warn: the API server schemas (/openapi/v3) cannot be read: rendered objects are checked offline',
    ]);
    server.failure = undefined;
    clock.now = 601_000;
    await schemas.documents(['v1']);
    expect(server.sent).toEqual(['/openapi/v3', '/openapi/v3', '/openapi/v3/api/v1?hash=A1']);
    expect(logs).toEqual([
      'warn: the API server schemas (/openapi/v3) cannot be read: rendered objects are checked offline',
      'info: the API server publishes its schemas again (/openapi/v3)',
    ]);
  });

  it('when discovery fails for a while, the documents held are used', async () => {
    const { server, schemas, clock, logs } = setUp();
    await schemas.documents(['v1']);
    server.failure = new ClusterError('Transient', 'connection refused');
    clock.now = 31_000;
    expect((await schemas.documents(['v1'])).get('v1')?.kinds.has('ConfigMap')).toBe(true);
    expect(schemas.held()).toEqual({ v1: 1 });
    expect(logs).toEqual([
      'warn: the API server schemas (/openapi/v3) could not be read again: those held are used',
    ]);
  });

  it('while /openapi/v3 fails, reads it again after a backoff that grows to 30 s, and asks nothing else', async () => {
    const { server, schemas, clock, logs } = setUp();
    server.failure = new ClusterError('Transient', 'connection refused');
    // An evaluation every 100 ms for two minutes.
    for (clock.now = 0; clock.now <= 120_000; clock.now += 100) await schemas.documents(['v1']);
    // 5 s doubling to 30 s, less up to 20 %: at 0, 4+, 12+, 28+, 52+, 76+, 100+ s at most.
    expect(server.sent.length).toBeLessThanOrEqual(7);
    expect(server.sent.length).toBeGreaterThanOrEqual(5);
    expect(new Set(server.sent)).toEqual(new Set(['/openapi/v3']));
    expect(logs).toHaveLength(1);
    server.failure = undefined;
    clock.now += 30_001;
    await schemas.documents(['v1']);
    expect(server.sent.slice(-2)).toEqual(['/openapi/v3', '/openapi/v3/api/v1?hash=A1']);
  });

  it('a document that cannot be fetched is not asked for again before its backoff', async () => {
    const { server, schemas, clock } = setUp();
    await schemas.documents([]);
    server.sent.length = 0;
    server.failure = new ClusterError('Transient', 'HTTP 503', 503);
    clock.now = 1_000;
    await schemas.documents(['v1']);
    server.failure = undefined;
    clock.now = 1_500; // within 640-800 ms of the failure
    await schemas.documents(['v1']);
    expect(server.sent).toEqual(['/openapi/v3/api/v1?hash=A1']);
  });
});
