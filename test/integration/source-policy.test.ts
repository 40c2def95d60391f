// Issue #22 on the operator (ADR 0019): no Secret read that nobody named, and bytes stay bytes.
// (a) a consumer reads from the Template's namespace only what the Template's spec.sources
// lists; (b) a Template's valueFrom migration cannot turn an instance's literal into a read of
// a Secret the instance never named; (c) binary Secret data is refused as text and round-trips
// byte-exactly with encoding: base64.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { binarySecret, instance, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { conditionOf, instanceStatus } from './support/instances.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

const ADMIN = 'PLATFORM-ADMIN-TOKEN-4e1f';
const SHARED = 'shared-ca-bundle';
const PROD = 'PROD-DB-PASSWORD-77c2';
// A keystore-like value: a magic number and bytes that are no UTF-8 text.
const KEYSTORE = Buffer.from([0xfe, 0xed, 0xfe, 0xed, 0x00, 0x02, 0xff, 0xfe, 0x80, 0x41, 0xc3]);

let platform: string;
let tenant: string;
let user: KubeCluster;
let running: RunningOperator;
/** Every Template here serves the tenant namespace (set once it exists). */
let servesTenant: Record<string, unknown>;

const CONFIG_MAP = (namespace: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}-out\n  namespace: ${namespace}\ndata:\n  v: {{quote parameters.v}}\n`;

async function readyOf(
  name: string,
  reason: string,
): Promise<{ status?: string; reason?: string; message?: string }> {
  return eventually(async () => {
    const ready = conditionOf(await instanceStatus(user, tenant, name));
    return ready?.reason === reason && ready;
  }, `instance ${name} Ready reason ${reason}`);
}

async function configMapData(
  name: string,
  namespace = tenant,
): Promise<Record<string, string> | undefined> {
  const object = await user.get({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace });
  return (object as { data?: Record<string, string> } | undefined)?.data;
}

beforeAll(async () => {
  const cluster = connect();
  platform = await freshNamespace(cluster, 'sources-platform');
  tenant = await freshNamespace(cluster, 'sources-tenant');
  servesTenant = { targetNamespaces: { explicit: { allow: { literal: [tenant] } } } };
  user = (await userClient()).cluster;
  running = await startOperator([platform, tenant]);
  await user.apply(binarySecret(platform, 'platform-admin', { token: ADMIN }));
  await user.apply(binarySecret(platform, 'shared-ca', { 'ca.crt': SHARED }));
  await user.apply(binarySecret(tenant, 'prod-db', { password: PROD }));
  await user.apply(binarySecret(tenant, 'keystore', { 'keystore.jks': KEYSTORE }));
});

afterAll(async () => {
  await running.stop();
});

describe("reads from the Template's namespace", () => {
  beforeAll(async () => {
    await user.apply(
      template(platform, 'reader', {
        ...servesTenant,
        sources: [{ kind: 'Secret', name: 'shared-ca' }],
        parameters: [{ name: 'v' }],
        handlebars: CONFIG_MAP('{{instance.namespace}}'),
      }),
    );
  });

  it('refuses a Secret the Template does not list, and renders nothing', async () => {
    await user.apply(
      instance(tenant, 'snoop', { name: 'reader', namespace: platform }, [
        {
          name: 'v',
          valueFrom: {
            secretKeyRef: { name: 'platform-admin', key: 'token', namespace: platform },
          },
          defaultValue: 'fallback',
        },
      ]),
    );
    const ready = await readyOf('snoop', 'ReferenceNotPermitted');
    expect(ready.message).toContain(
      `Secret ${platform}/platform-admin is in the namespace of the Template "${platform}/reader"`,
    );
    expect(ready.message).toContain(
      "add {kind: Secret, name: platform-admin} to the Template's spec.sources",
    );
    expect(await configMapData('snoop-out')).toBeUndefined();
    const statuses = await user.list(API_VERSION, 'TemplateInstance', { namespace: tenant });
    expect(JSON.stringify(statuses)).not.toContain(ADMIN);
  });

  it('reads a Secret the Template lists', async () => {
    await user.apply(
      instance(tenant, 'listed', { name: 'reader', namespace: platform }, [
        {
          name: 'v',
          valueFrom: { secretKeyRef: { name: 'shared-ca', key: 'ca.crt', namespace: platform } },
        },
      ]),
    );
    expect((await readyOf('listed', 'Reconciled')).status).toBe('True');
    expect(await configMapData('listed-out')).toEqual({ v: SHARED });
  });
});

describe("a Template's valueFrom migration to a Secret", () => {
  beforeAll(async () => {
    // The hostile shape of the issue: the render lands in the Template's own namespace.
    await user.apply(
      template(platform, 'migrating', {
        ...servesTenant,
        allowCrossNamespaceResources: true,
        parameters: [{ name: 'v' }],
        migrations: [
          { valueFrom: { parameter: 'v', secretKeyRef: { name: 'prod-db', key: 'password' } } },
        ],
        handlebars: CONFIG_MAP(platform),
      }),
    );
  });

  it('keeps the literal and reports that it waits for consent; the Secret reaches nothing', async () => {
    await user.apply(
      instance(tenant, 'replicas', { name: 'migrating', namespace: platform }, [
        { name: 'v', value: '3' },
      ]),
    );
    expect((await readyOf('replicas', 'Reconciled')).status).toBe('True');
    expect(await configMapData('replicas-out', platform)).toEqual({ v: '3' });
    const parameters = conditionOf(
      await instanceStatus(user, tenant, 'replicas'),
      'ParametersValid',
    );
    expect(parameters?.message).toContain(
      `the Template migrates parameter "v" to a read of Secret ${tenant}/prod-db (key "password"), which this instance does not name`,
    );
    expect(parameters?.message).toContain('stencil.dev/consent-secret-migration: "v"');
    for (const namespace of [platform, tenant]) {
      const configMaps = await user.list('v1', 'ConfigMap', { namespace });
      expect(JSON.stringify(configMaps)).not.toContain(PROD);
    }
    const events = await user.list('v1', 'Event', { namespace: tenant });
    expect(JSON.stringify(events)).not.toContain(PROD);
    expect(running.logs.join('')).not.toContain(PROD);
  });

  it("applies once the instance's owner consents by annotation", async () => {
    await user.apply(
      instance(
        tenant,
        'consenting',
        { name: 'migrating', namespace: platform },
        [{ name: 'v', value: '3' }],
        { annotations: { 'stencil.dev/consent-secret-migration': 'v' } },
      ),
    );
    expect((await readyOf('consenting', 'Reconciled')).status).toBe('True');
    expect(await configMapData('consenting-out', platform)).toEqual({ v: PROD });
  });
});

describe('binary Secret data', () => {
  beforeAll(async () => {
    const secretBody =
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{instance.name}}-copy\ndata:\n  keystore.jks: {{parameters.ks}}\n';
    await user.apply(
      template(tenant, 'as-text', {
        ...servesTenant,
        parameters: [{ name: 'ks' }],
        handlebars: secretBody,
      }),
    );
    await user.apply(
      template(tenant, 'as-bytes', {
        ...servesTenant,
        parameters: [{ name: 'ks', type: 'string', encoding: 'base64' }],
        handlebars: secretBody,
      }),
    );
  });
  const keystoreRef = { secretKeyRef: { name: 'keystore', key: 'keystore.jks' } };

  it('is refused as text, naming the parameter and encoding: base64', async () => {
    await user.apply(
      instance(tenant, 'text', { name: 'as-text' }, [{ name: 'ks', valueFrom: keystoreRef }]),
    );
    const ready = await readyOf('text', 'ParameterResolutionFailed');
    expect(ready.message).toMatch(
      /^parameters\.ks: parameter "ks": key "keystore.jks" of Secret .*\/keystore holds bytes that are not UTF-8 text; declare encoding: base64/,
    );
    expect(ready.message).not.toContain(KEYSTORE.toString('base64'));
    expect(
      await user.get({ apiVersion: 'v1', kind: 'Secret', name: 'text-copy', namespace: tenant }),
    ).toBeUndefined();
  });

  it('round-trips byte-exactly with encoding: base64', async () => {
    await user.apply(
      instance(tenant, 'bytes', { name: 'as-bytes' }, [{ name: 'ks', valueFrom: keystoreRef }]),
    );
    expect((await readyOf('bytes', 'Reconciled')).status).toBe('True');
    const copy = (await user.get({
      apiVersion: 'v1',
      kind: 'Secret',
      name: 'bytes-copy',
      namespace: tenant,
    })) as { data?: Record<string, string> } | undefined;
    expect(Buffer.from(copy?.data?.['keystore.jks'] ?? '', 'base64').equals(KEYSTORE)).toBe(true);
  });
});
