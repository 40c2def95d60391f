// The schemas the API server publishes (ADR 0030), on the real API server: the built-in kinds'
// documents convert to exactly the offline bundle; a CRD installed in the cluster is checked as
// the CLI checks its file; discovery and each document are fetched once per hash (a CRD change
// re-fetches its own group-version only); any authenticated user may read them; a client that may
// not is checked offline and says so once.
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import { KubernetesSchemas } from '../../src/engine/object-schema/kubernetes-schemas.ts';
import type { ObjectVerdict } from '../../src/engine/object-schema/object-problems.ts';
import { OfflineSchemas, type Kinded } from '../../src/engine/object-schema/object-schema.ts';
import { builtInSchema } from '../../src/engine/object-schema/schema-dialect.ts';
import { ClusterSchemas } from '../../src/kube/cluster-schemas.ts';
import { connect, type KubeConnection } from '../../src/kube/connection.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { defaultSchemaDirectory, schemaFileReader } from '../../src/kubernetes-schema-files.ts';
import { validObjects } from '../fixtures/built-in-objects.ts';
import { eventually, userClient } from './support/operator.ts';

type Json = Record<string, unknown>;

const offline = new OfflineSchemas(new KubernetesSchemas(schemaFileReader()));
const suffix = randomBytes(3).toString('hex');
/** A group of this file's own: CRDs are cluster-wide, and the control plane is shared. */
const group = `schemas-${suffix}.example.com`;
const apiVersion = `${group}/v1`;

const GADGET_SPEC: Json = {
  type: 'object',
  required: ['size'],
  'x-kubernetes-validations': [{ rule: 'self.size <= 10', message: 'size is at most 10' }],
  properties: {
    size: { type: 'integer', format: 'int32', minimum: 1, description: 'How big.' },
    mode: { type: 'string', enum: ['fast', 'safe'] },
    port: { 'x-kubernetes-int-or-string': true },
    note: { type: 'string', nullable: true, maxLength: 8 },
    config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    template: {
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      'x-kubernetes-preserve-unknown-fields': true,
    },
    tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
    ratio: { type: 'number', maximum: 1, exclusiveMaximum: true },
  },
};

function gadgetCrd(spec: Json): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `gadgets.${group}` },
    spec: {
      group,
      names: { kind: 'Gadget', plural: 'gadgets', singular: 'gadget', listKind: 'GadgetList' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec } } },
        },
      ],
    },
  };
}

const gadget = (spec: Json): Json => ({
  apiVersion,
  kind: 'Gadget',
  metadata: { name: 'g', namespace: 'team-a' },
  spec,
});

/** Object keys sorted, so that definitions compare whatever order a document wrote them in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

/** Every definition of the offline bundle, as KubernetesSchemas holds it. */
function bundleDefinitions(): Map<string, string> {
  const directory = defaultSchemaDirectory();
  const definitions = new Map<string, string>();
  for (const file of readdirSync(directory).filter((f) => f !== 'index.json')) {
    const read = JSON.parse(readFileSync(join(directory, file), 'utf8')) as Record<string, Json>;
    for (const [name, definition] of Object.entries(read)) {
      definitions.set(name, canonical(builtInSchema(definition)));
    }
  }
  return definitions;
}

/** The URL (with its hash) under which the API server publishes `version`'s document. */
async function publishedUrl(
  connection: KubeConnection,
  version: string,
): Promise<string | undefined> {
  const discovery = await connection.http.request<{
    paths: Record<string, { serverRelativeURL: string }>;
  }>({ method: 'GET', path: '/openapi/v3' });
  return discovery.paths[`apis/${version}`]?.serverRelativeURL;
}

/** Kinded, as the engine's `prepare` takes it. */
const kinded = (...objects: Json[]): Kinded[] => objects as unknown as Kinded[];

let admin: KubeConnection;
let user: KubeCluster;

beforeAll(async () => {
  admin = await connect(inject('kubeconfig'));
  user = (await userClient()).cluster;
  await user.apply(gadgetCrd(GADGET_SPEC));
  await eventually(() => publishedUrl(admin, apiVersion), `${apiVersion} published`);
}, 60_000);

afterAll(async () => {
  await user.delete({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    name: `gadgets.${group}`,
  });
  admin.http.close();
});

describe('the built-in kinds, from the documents the API server publishes', () => {
  const versions = [
    'v1',
    'apps/v1',
    'batch/v1',
    'networking.k8s.io/v1',
    'policy/v1',
    'rbac.authorization.k8s.io/v1',
    'autoscaling/v2',
  ];

  it('convert to exactly the definitions of the offline bundle (the same Kubernetes version)', async () => {
    const schemas = new ClusterSchemas(admin.http, offline);
    const documents = await schemas.documents(versions);
    const bundle = bundleDefinitions();
    const index = JSON.parse(
      readFileSync(join(defaultSchemaDirectory(), 'index.json'), 'utf8'),
    ) as {
      groupVersions: Record<string, { kinds: Record<string, string> }>;
    };
    let compared = 0;
    for (const version of versions) {
      const document = documents.get(version)!;
      expect(document.notes).toEqual([]);
      for (const [name, definition] of document.definitions) {
        expect(canonical(definition), name).toBe(bundle.get(name));
        compared++;
      }
      for (const [kind, entry] of document.kinds) {
        expect(entry, `${version} ${kind}`).toEqual({
          definition: index.groupVersions[version]!.kinds[kind],
        });
      }
    }
    expect(compared).toBeGreaterThan(600);
  });

  it('give every verdict the offline bundle gives', async () => {
    const { schemas } = new ClusterSchemas(admin.http, offline);
    const deployment = validObjects().Deployment as Json & { spec: Json };
    const broken = structuredClone(deployment) as Json & {
      spec: { replicas: unknown; template: { spec: Json } };
    };
    broken.spec.replicas = 'three';
    broken.spec.template.spec.containerz = [];
    const objects = [...Object.values(validObjects()), broken] as Json[];
    await schemas.prepare(kinded(...objects));
    for (const object of objects) expect(schemas.check(object)).toEqual(offline.check(object));
    const verdict = schemas.check(broken) as Extract<ObjectVerdict, { checked: true }>;
    expect(verdict.problems.map((p) => p.path)).toEqual([
      'spec.replicas',
      'spec.template.spec.containerz',
    ]);
  });
});

describe('a CRD installed in the cluster', () => {
  it('its kind is checked against its published schema, as the CLI checks the CRD file', async () => {
    const { schemas } = new ClusterSchemas(admin.http, offline);
    const crdFile = new OfflineSchemas(offline.builtIns, [gadgetCrd(GADGET_SPEC)]);
    const specs: Json[] = [
      {
        size: 3,
        mode: 'safe',
        port: 'http',
        note: null,
        config: { any: { thing: [1, 'two'] } },
        template: { apiVersion: 'v1', kind: 'Pod', spec: { whatever: true } },
        tags: ['a', 'b'],
        ratio: 0.5,
      },
      { size: 1, colour: 'red' },
      { size: '3' },
      {},
      { size: 1, mode: 'slow' },
      { size: 1, ratio: 1 },
      { size: 11 },
      { size: 1, tags: ['a', 'a'] },
      { size: 1, note: 'far too long' },
      { size: 1, template: { kind: 'Pod' } },
      { size: 1, port: 1.5 },
    ];
    const objects = specs.map(gadget);
    await schemas.prepare(kinded(...objects));
    await crdFile.prepare(kinded(...objects));
    for (const object of objects) expect(schemas.check(object)).toEqual(crdFile.check(object));
    const unknown = schemas.check(gadget({ size: 1, colour: 'red' }));
    expect(unknown).toMatchObject({
      checked: true,
      problems: [{ path: 'spec.colour', message: 'unknown field (strict field validation)' }],
    });
  });
});

describe('requests', () => {
  it('discovery, then each document once per hash; a changed CRD re-fetches its own only', async () => {
    const connection = await connect(inject('kubeconfig'));
    const sent: string[] = [];
    connection.http.onRequest((method, path, _dryRun, _status, query) =>
      sent.push(`${method} ${path}${query.has('hash') ? ' (hash)' : ''}`),
    );
    const clock = { now: 0 };
    const cluster = new ClusterSchemas(connection.http, offline, { now: () => clock.now });
    const { schemas } = cluster;
    const objects = [validObjects().Deployment!, validObjects().ConfigMap!, gadget({ size: 1 })];
    // Passes at once and one after another: the documents held are used.
    await Promise.all([1, 2, 3, 4, 5].map(() => schemas.prepare(kinded(...objects))));
    for (let i = 0; i < 3; i++) await schemas.prepare(kinded(...objects));
    expect(sent.sort()).toEqual([
      'GET /openapi/v3',
      'GET /openapi/v3/api/v1 (hash)',
      'GET /openapi/v3/apis/apps/v1 (hash)',
      `GET /openapi/v3/apis/${apiVersion} (hash)`,
    ]);
    expect(schemas.check(gadget({ size: 1, colour: 'red' }))).toMatchObject({
      problems: [{ path: 'spec.colour' }],
    });

    // The CRD declares the field: its group-version gets a new hash.
    const before = await publishedUrl(admin, apiVersion);
    const properties = GADGET_SPEC.properties as Json;
    await user.apply(
      gadgetCrd({ ...GADGET_SPEC, properties: { ...properties, colour: { type: 'string' } } }),
    );
    await eventually(
      async () => (await publishedUrl(admin, apiVersion)) !== before,
      'a new hash for the changed CRD',
    );
    sent.length = 0;
    clock.now += 31_000;
    await Promise.all([1, 2, 3].map(() => schemas.prepare(kinded(...objects))));
    expect(sent.sort()).toEqual(['GET /openapi/v3', `GET /openapi/v3/apis/${apiVersion} (hash)`]);
    expect(schemas.check(gadget({ size: 1, colour: 'red' }))).toMatchObject({
      checked: true,
      problems: [],
    });
    expect(cluster.fetched).toBe(4);
    connection.http.close();
  });
});

describe('who may read them', () => {
  it('any authenticated user (system:discovery): the ordinary user, bound to no role', async () => {
    const ordinary = await connect(inject('ordinaryKubeconfig'));
    const logs: string[] = [];
    const cluster = new ClusterSchemas(ordinary.http, offline, {
      log: (level, message) => logs.push(`${level}: ${message}`),
    });
    const documents = await cluster.documents(['apps/v1']);
    expect(documents.get('apps/v1')?.kinds.get('Deployment')).toEqual({
      definition: 'io.k8s.api.apps.v1.Deployment',
    });
    expect(logs).toEqual([]);
    ordinary.http.close();
  });

  it('a client that may not read /openapi/v3 checks offline, and says so once', async () => {
    // The ordinary user's kubeconfig with a token the API server does not know: 401.
    const kubeconfig = join(tmpdir(), `stencil-schemas-${suffix}.kubeconfig`);
    const text = readFileSync(inject('ordinaryKubeconfig'), 'utf8');
    writeFileSync(kubeconfig, text.replace(/token: .*/, 'token: not-a-token'), { mode: 0o600 });
    const stranger = await connect(kubeconfig);
    const logs: string[] = [];
    const cluster = new ClusterSchemas(stranger.http, offline, {
      log: (level, message) => logs.push(`${level}: ${message}`),
    });
    const broken = { ...validObjects().Deployment!, spec: { replicas: 'three' } };
    for (let i = 0; i < 3; i++) await cluster.schemas.prepare(kinded(broken));
    expect(cluster.schemas.check(broken)).toEqual(offline.check(broken));
    expect(logs).toEqual([
      'warn: the API server schemas (/openapi/v3) cannot be read: rendered objects are checked offline',
    ]);
    expect(cluster.held()).toEqual({});
    stranger.http.close();
  });
});
