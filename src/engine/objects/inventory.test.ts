import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/object-meta.ts';
import {
  compareInstallOrder,
  gvkKey,
  labelValue,
  parseGvkKey,
  sortForInstall,
  waveOf,
  waveProblem,
  stampOwnership,
} from './inventory.ts';

const owner = { name: 'shop', namespace: 'team-a', uid: 'uid-1' };
const obj = (apiVersion: string, kind: string, name: string, namespace?: string): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
});

describe('ownership stamping (SPEC §6)', () => {
  it('adds the labels, the instance-ref annotation and an ownerReference in the same namespace', () => {
    const stamped = stampOwnership(
      {
        ...obj('v1', 'ConfigMap', 'c', 'team-a'),
        metadata: { name: 'c', namespace: 'team-a', labels: { app: 'x' } },
      },
      owner,
      'revert',
    );
    expect(stamped.metadata).toEqual({
      name: 'c',
      namespace: 'team-a',
      labels: {
        app: 'x',
        'stencil.dev/instance-uid': 'uid-1',
        'stencil.dev/instance-name': 'shop',
        'stencil.dev/instance-namespace': 'team-a',
        'stencil.dev/sync-mode': 'revert',
        // KEP-3659's id of the parent shop.team-a.TemplateInstance.stencil.dev (computed apart).
        'applyset.kubernetes.io/part-of': 'applyset-UNZPALsZXkHBfcSdn6g7T6K08w3EWDIGlscAHAT8Jlo-v1',
      },
      annotations: { 'stencil.dev/instance-ref': 'team-a/shop' },
      ownerReferences: [
        {
          apiVersion: 'stencil.dev/v1alpha1',
          kind: 'TemplateInstance',
          name: 'shop',
          uid: 'uid-1',
          controller: true,
        },
      ],
    });
  });

  it('puts no ownerReference on resources outside the instance namespace or cluster-scoped', () => {
    expect(
      stampOwnership(obj('v1', 'ConfigMap', 'c', 'other'), owner, 'off').metadata.ownerReferences,
    ).toBeUndefined();
    expect(
      stampOwnership(obj('v1', 'Namespace', 'n'), owner, 'off').metadata.ownerReferences,
    ).toBeUndefined();
  });

  it('keeps label values within 63 characters for long instance names', () => {
    const long = 'a'.repeat(100);
    expect(labelValue(long)).toHaveLength(63);
    expect(labelValue(long)).not.toBe(labelValue(`${'a'.repeat(99)}b`));
    expect(labelValue('short')).toBe('short');
  });
});

describe('install order (SPEC §6 step 4)', () => {
  it('orders known kinds as listed, then everything else by kind and name', () => {
    const sorted = sortForInstall([
      obj('apps/v1', 'Deployment', 'web'),
      obj('example.com/v1', 'Widget', 'b'),
      obj('v1', 'Service', 'web'),
      obj('example.com/v1', 'Gadget', 'z'),
      obj('v1', 'Namespace', 'ns'),
      obj('example.com/v1', 'Widget', 'a'),
      obj('networking.k8s.io/v1', 'Ingress', 'web'),
      obj('v1', 'ConfigMap', 'cfg'),
    ]);
    expect(sorted.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Namespace/ns',
      'ConfigMap/cfg',
      'Service/web',
      'Deployment/web',
      'Ingress/web',
      'Gadget/z',
      'Widget/a',
      'Widget/b',
    ]);
    expect(
      compareInstallOrder({ kind: 'Secret', name: 'a' }, { kind: 'ServiceAccount', name: 'a' }),
    ).toBeGreaterThan(0);
  });
});

describe('GVK keys', () => {
  it.each([
    ['apps/v1', 'Deployment', 'apps/v1/Deployment'],
    ['v1', 'ConfigMap', '/v1/ConfigMap'],
  ])('%s %s is %s and parses back', (apiVersion, kind, key) => {
    expect(gvkKey({ apiVersion, kind })).toBe(key);
    expect(parseGvkKey(key)).toEqual({ apiVersion, kind });
  });

  it('rejects malformed keys', () => {
    expect(parseGvkKey('Deployment')).toBeUndefined();
  });
});

describe('waves', () => {
  const withWave = (kind: string, name: string, wave?: string): KubeObject => ({
    apiVersion: 'v1',
    kind,
    metadata: {
      name,
      ...(wave !== undefined ? { annotations: { 'stencil.dev/wave': wave } } : {}),
    },
  });

  it('sort before install order, lower waves first', () => {
    const sorted = sortForInstall([
      withWave('Namespace', 'late', '2'),
      withWave('ConfigMap', 'early', '-1'),
      withWave('Service', 'default'),
    ]);
    expect(sorted.map((o) => o.metadata.name)).toEqual(['early', 'default', 'late']);
    expect(sorted.map(waveOf)).toEqual([-1, 0, 2]);
  });

  it('must be whole numbers', () => {
    expect(waveProblem(withWave('ConfigMap', 'x', '1'))).toBeUndefined();
    expect(waveProblem(withWave('ConfigMap', 'x', 'first'))).toBe(
      'ConfigMap x: stencil.dev/wave must be a whole number, got "first"',
    );
  });
});
