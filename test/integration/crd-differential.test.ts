// Differential test of the CRD schema (issue #11): random Templates and TemplateInstances are
// sent to the real API server as dry-run creates and checked offline by validateAgainstCrd (what
// `stencil validate` runs); both must accept or both must refuse. Prints the cases tried.
import { fc } from '@fast-check/vitest';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeConnection } from '../../src/kube/connection.ts';
import { validateAgainstCrd, type CrdKind } from '../../src/engine/crd-schema/schema-validation.ts';
import { isClusterError } from '../../src/reconcile/cluster-port.ts';
import { runs } from '../support/property-runs.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { userClient } from './support/operator.ts';

let namespace: string;
let connection: KubeConnection;

beforeAll(async () => {
  namespace = await freshNamespace(connect(), 'crd-diff');
  connection = (await userClient(inject('kubeconfig'))).connection;
});

afterAll(() => connection?.http.close());

const name = fc.oneof(
  fc.constantFrom('image', 'dbPassword', '_x', 'a1', '1bad', 'has-dash', '', 'ok'),
  fc.string({ maxLength: 6 }),
);
const anyJson = fc.jsonValue({ maxDepth: 2 });
const text = fc.oneof(
  fc.constantFrom('', 'x', 'team-a', '.a.b', '{.a}', 'a.b'),
  fc.string({ maxLength: 5 }),
);
const keyRef = fc.record({ name: text, key: text, namespace: text }, { requiredKeys: [] });
const objectFieldRef = fc.record(
  {
    apiVersion: text,
    kind: text,
    name: text,
    namespace: text,
    jsonPath: fc.oneof(text, fc.constantFrom('.status.ip', '{.status}', 'status', '.items[*]')),
  },
  { requiredKeys: [] },
);
const valueFrom = fc.record(
  { secretKeyRef: keyRef, configMapKeyRef: keyRef, objectFieldRef },
  { requiredKeys: [] },
);
const instanceParameter = fc.record(
  { name, value: anyJson, valueFrom, defaultValue: anyJson },
  { requiredKeys: [] },
);
const instanceSpec = fc.record(
  {
    templateRef: fc.record({ name: text, namespace: text }, { requiredKeys: [] }),
    parameters: fc.array(instanceParameter, { maxLength: 3 }),
  },
  { requiredKeys: [] },
);

const templateParameter = fc.record(
  {
    name,
    type: fc.constantFrom('string', 'number', 'bool', 'array', 'object', 'int', ''),
    value: anyJson,
    required: fc.boolean(),
    disableOverride: fc.boolean(),
    exposeInStatus: fc.boolean(),
    description: text,
  },
  { requiredKeys: [] },
);
const templateSpec = fc.record(
  {
    parameters: fc.array(templateParameter, { maxLength: 3 }),
    sync: fc.record(
      {
        mode: fc.constantFrom('off', 'revert', 'strict', 'Revert', ''),
        ignoreFields: fc.array(text, { maxLength: 2 }),
      },
      { requiredKeys: [] },
    ),
    sourceNamespaces: fc.array(text, { maxLength: 2 }),
    allowCrossNamespaceResources: fc.oneof(fc.boolean(), fc.constant('yes')),
    handlebars: fc.oneof(fc.constant(''), fc.constant('apiVersion: v1\n'), text),
  },
  { requiredKeys: [] },
);

/** Whether the API server accepts `object` as a dry-run create. */
async function serverAccepts(kind: CrdKind, spec: unknown): Promise<{ ok: boolean; why: string }> {
  const plural = kind === 'Template' ? 'templates' : 'templateinstances';
  try {
    await connection.http.request({
      method: 'POST',
      path: `/apis/${API_VERSION}/namespaces/${namespace}/${plural}`,
      query: { dryRun: 'All' },
      body: { apiVersion: API_VERSION, kind, metadata: { name: 'x', namespace }, spec },
    });
    return { ok: true, why: '' };
  } catch (error) {
    if (isClusterError(error, 'Invalid') || isClusterError(error, 'Other'))
      return { ok: false, why: error.message };
    throw error;
  }
}

async function differential(
  kind: CrdKind,
  spec: fc.Arbitrary<unknown>,
  numRuns: number,
): Promise<void> {
  let tried = 0;
  let accepted = 0;
  await fc.assert(
    fc.asyncProperty(spec, async (s) => {
      tried++;
      const server = await serverAccepts(kind, s);
      const offline = validateAgainstCrd(kind, {
        apiVersion: API_VERSION,
        kind,
        metadata: { name: 'x', namespace },
        spec: s,
      });
      if (server.ok) accepted++;
      expect(
        { accepted: offline.length === 0, problems: offline.map((p) => `${p.path}: ${p.message}`) },
        `API server: ${server.ok ? 'accepted' : server.why}`,
      ).toMatchObject({ accepted: server.ok });
    }),
    runs(numRuns),
  );
  console.log(
    `[property] crd differential :: ${kind}: ${tried} cases tried, ${accepted} accepted by the API server`,
  );
}

it('agrees with the API server on random TemplateInstances', async () => {
  await differential('TemplateInstance', instanceSpec, 2000);
}, 240_000);

it('agrees with the API server on random Templates', async () => {
  await differential('Template', templateSpec, 2000);
}, 240_000);
