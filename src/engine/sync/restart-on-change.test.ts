import { describe, expect, it } from 'vitest';
import type { JsonValue, KubeObject } from '../../api/object-meta.ts';
import type { ResolvedParameters } from '../parameters/parameters.ts';
import { stampSourcesHash } from './restart-on-change.ts';

const deployment = (annotations: Record<string, string>): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', annotations },
  spec: { template: { metadata: { labels: { app: 'web' } }, spec: { containers: [] } } },
});
const configMap: KubeObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'app-config' },
  data: { level: 'info' },
};

function resolved(
  values: Record<string, JsonValue>,
): Pick<ResolvedParameters, 'values' | 'status'> {
  return {
    values,
    status: [
      { name: 'password', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
      { name: 'region', valueFrom: { configMapKeyRef: { name: 'env', key: 'region' } } },
      { name: 'replicas' },
    ],
  };
}

function hashOf(
  objects: KubeObject[],
  values: Record<string, JsonValue>,
  salt = 'uid-1',
): string | undefined {
  const out = stampSourcesHash(objects, resolved(values), salt);
  if (!out.ok) throw new Error(out.problems[0]!.message);
  const spec = out.value[0]!.spec as {
    template: { metadata: { annotations?: Record<string, string> } };
  };
  return spec.template.metadata.annotations?.['stencil.dev/sources-hash'];
}

const base = { password: 's3cret-one', region: 'eu', replicas: 2 };

describe('restart-on-change', () => {
  it('changes the pod template hash exactly when a named source value changes', () => {
    const web = deployment({ 'stencil.dev/restart-on-change': 'password' });
    const before = hashOf([web], base);
    expect(before).toMatch(/^[0-9a-f]{32}$/);
    expect(hashOf([web], { ...base, password: 's3cret-two' })).not.toBe(before);
    expect(hashOf([web], { ...base, region: 'us' })).toBe(before);
    expect(hashOf([web], { ...base, replicas: 3 })).toBe(before);
  });

  it('takes every valueFrom parameter for "true", and named rendered ConfigMaps', () => {
    const all = deployment({ 'stencil.dev/restart-on-change': 'true' });
    expect(hashOf([all], { ...base, region: 'us' })).not.toBe(hashOf([all], base));
    expect(hashOf([all], { ...base, replicas: 5 })).toBe(hashOf([all], base));
    const withConfig = deployment({
      'stencil.dev/restart-on-change': 'password',
      'stencil.dev/restart-on-change-objects': 'ConfigMap/app-config',
    });
    const changed = { ...configMap, data: { level: 'debug' } };
    expect(hashOf([withConfig, changed], base)).not.toBe(hashOf([withConfig, configMap], base));
  });

  it('is keyed per instance and never shows the value', () => {
    const web = deployment({ 'stencil.dev/restart-on-change': 'password' });
    expect(hashOf([web], base, 'uid-1')).not.toBe(hashOf([web], base, 'uid-2'));
    expect(hashOf([web], base)).not.toContain('s3cret');
  });

  it('names what it cannot use', () => {
    const unknown = stampSourcesHash(
      [deployment({ 'stencil.dev/restart-on-change': 'nope' })],
      resolved(base),
      'u',
    );
    expect(!unknown.ok && unknown.problems[0]?.message).toContain(
      '"nope", which is not a parameter',
    );
    const notWorkload = stampSourcesHash(
      [
        {
          ...configMap,
          metadata: {
            ...configMap.metadata,
            annotations: { 'stencil.dev/restart-on-change': 'true' },
          },
        },
      ],
      resolved(base),
      'u',
    );
    expect(!notWorkload.ok && notWorkload.problems[0]?.message).toContain(
      'Deployments, StatefulSets and DaemonSets only',
    );
    const missingObject = stampSourcesHash(
      [
        deployment({
          'stencil.dev/restart-on-change': 'true',
          'stencil.dev/restart-on-change-objects': 'ConfigMap/gone',
        }),
      ],
      resolved(base),
      'u',
    );
    expect(!missingObject.ok && missingObject.problems[0]?.message).toContain('"ConfigMap/gone"');
  });
});
