// SPEC §1–2 CRD-level rules, enforced by the real API server (same table as the offline validator).
import { beforeAll, describe, expect, it } from 'vitest';
import { CRD_CASES, outermostPaths } from '../fixtures/crd-cases.ts';
import { API_VERSION, GROUP, VERSION } from '../../src/api/well-known.ts';
import { asRejection, connect, freshNamespace, type TestCluster } from './support/cluster.ts';

const plural = { Template: 'templates', TemplateInstance: 'templateinstances' } as const;

describe('the API server enforces the CRD rules', () => {
  let cluster: TestCluster;
  let namespace: string;

  beforeAll(async () => {
    cluster = connect();
    namespace = await freshNamespace(cluster, 'crd-validation');
  });

  it.each(CRD_CASES.map((c, i) => ({ ...c, i })))('$name', async ({ kind, spec, rejected, i }) => {
    const name = `case-${i}`;
    const body = { apiVersion: API_VERSION, kind, metadata: { name }, spec };
    const target = { group: GROUP, version: VERSION, namespace, plural: plural[kind] };
    const outcome = await cluster.custom
      .createNamespacedCustomObject({ ...target, body })
      .then(() => undefined, asRejection);
    if (!rejected) {
      expect(outcome).toBeUndefined();
      const stored = (await cluster.custom.getNamespacedCustomObject({ ...target, name })) as {
        spec: unknown;
      };
      expect(stored.spec).toEqual(spec);
      return;
    }
    expect(outcome?.status).toBe(422);
    expect(outermostPaths(outcome?.fields ?? [])).toEqual([...rejected.fields].sort());
    expect(outcome?.message).toContain(rejected.message);
  });
});
