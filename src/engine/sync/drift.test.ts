import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/object-meta.ts';
import {
  carryIgnoredFields,
  changedManagedPath,
  parseFieldPath,
  sameManagedState,
} from './drift.ts';

const deployment = (
  replicas: number,
  image = 'nginx:1',
  extra: Record<string, unknown> = {},
): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'a', resourceVersion: '1', annotations: { team: 'x' } },
  spec: {
    replicas,
    template: {
      spec: {
        containers: [
          { name: 'app', image },
          { name: 'side', image: 'busybox' },
        ],
      },
    },
    ...extra,
  },
});

describe('ignoreFields paths', () => {
  it.each([
    ['spec.replicas', [{ key: 'spec' }, { key: 'replicas' }]],
    [
      'spec.containers[*].image',
      [{ key: 'spec' }, { key: 'containers' }, { all: true }, { key: 'image' }],
    ],
    ['spec.ports[0]', [{ key: 'spec' }, { key: 'ports' }, { index: 0 }]],
  ])('parses %s', (path, segments) => {
    expect(parseFieldPath(path)).toEqual(segments);
  });

  it.each(['', 'a..b', 'a[x]', 'a]', '.a'])('rejects %j', (path) => {
    expect(parseFieldPath(path)).toBeUndefined();
  });
});

describe('carrying live values into what is applied', () => {
  it('keeps the live value of an ignored path', () => {
    const carried = carryIgnoredFields(deployment(2), deployment(5), ['spec.replicas']);
    expect((carried as unknown as { spec: { replicas: number } }).spec.replicas).toBe(5);
  });

  it('drops an ignored field the live object does not have', () => {
    const live = deployment(2);
    delete (live as unknown as { spec: { replicas?: number } }).spec.replicas;
    expect(
      (carryIgnoredFields(deployment(2), live, ['spec.replicas']) as unknown as { spec: object })
        .spec,
    ).not.toHaveProperty('replicas');
  });

  it('carries every list element for [*]', () => {
    const carried = carryIgnoredFields(deployment(2, 'nginx:1'), deployment(2, 'nginx:9'), [
      'spec.template.spec.containers[*].image',
    ]);
    expect(carried).toEqual(deployment(2, 'nginx:9'));
  });

  it('changes nothing without a live object', () => {
    const desired = deployment(2);
    expect(carryIgnoredFields(desired, undefined, ['spec.replicas'])).toBe(desired);
  });
});

describe('what counts as a change', () => {
  it('ignores server-managed metadata, status, finalizers and ownerReferences', () => {
    const live = {
      ...deployment(2),
      status: { readyReplicas: 2 },
      metadata: {
        ...deployment(2).metadata,
        resourceVersion: '9',
        uid: 'u',
        generation: 4,
        finalizers: ['x'],
        ownerReferences: [],
      },
    } as KubeObject;
    expect(sameManagedState(deployment(2), live)).toBe(true);
  });

  it('names the first changed path', () => {
    expect(changedManagedPath(deployment(2), deployment(2, 'evil:latest'))).toBe(
      'spec.template.spec.containers[0].image',
    );
    expect(changedManagedPath(deployment(2), deployment(3))).toBe('spec.replicas');
  });

  it('does not count a change inside an ignored path', () => {
    expect(changedManagedPath(deployment(2), deployment(7), ['spec.replicas'])).toBeUndefined();
    expect(
      changedManagedPath(deployment(2, 'a'), deployment(2, 'b'), [
        'spec.template.spec.containers[*].image',
      ]),
    ).toBeUndefined();
    expect(
      changedManagedPath(deployment(2), deployment(2, 'x', { paused: true }), ['spec.template']),
    ).toBe('spec.paused');
  });
});
