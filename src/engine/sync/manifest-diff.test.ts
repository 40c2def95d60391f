import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/object-meta.ts';
import { diffManifests, isEmptyDiff, SECRET_DATA_PLACEHOLDER } from './manifest-diff.ts';

const object = (apiVersion: string, kind: string, name: string, rest = {}): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, namespace: 'team-a' },
  ...rest,
});

describe('diffManifests', () => {
  it('matches objects by group, kind and name: a version change is a change, not a prune', () => {
    const diff = diffManifests(
      [object('autoscaling/v1', 'HorizontalPodAutoscaler', 'web')],
      [object('autoscaling/v2', 'HorizontalPodAutoscaler', 'web')],
    );
    expect(diff).toEqual({
      added: [],
      pruned: [],
      changed: [
        {
          resource: 'autoscaling/v2 HorizontalPodAutoscaler team-a/web',
          changes: [{ path: 'apiVersion', from: 'autoscaling/v1', to: 'autoscaling/v2' }],
        },
      ],
    });
  });

  it('reports the leaf paths of list items and fields added or removed', () => {
    const before = object('v1', 'Service', 's', { spec: { ports: [{ port: 80 }], type: 'X' } });
    const after = object('v1', 'Service', 's', {
      spec: { ports: [{ port: 80 }, { port: 443 }], ipFamilies: ['IPv4'] },
    });
    expect(diffManifests([before], [after]).changed[0]!.changes).toEqual([
      { path: 'spec.ports[1]', to: { port: 443 } },
      { path: 'spec.type', from: 'X' },
      { path: 'spec.ipFamilies', to: ['IPv4'] },
    ]);
  });

  it("hides a Secret's data values whatever made them, and keys with dots are quoted", () => {
    const secret = (value: string): KubeObject =>
      object('v1', 'Secret', 'api', { data: { 'key.pem': value } });
    expect(diffManifests([secret('b2xk')], [secret('bmV3')]).changed[0]!.changes).toEqual([
      { path: 'data["key.pem"]', from: SECRET_DATA_PLACEHOLDER, to: SECRET_DATA_PLACEHOLDER },
    ]);
  });

  it('is empty for the same render', () => {
    const objects = [object('v1', 'ConfigMap', 'a', { data: { x: '1' } })];
    expect(isEmptyDiff(diffManifests(objects, structuredClone(objects)))).toBe(true);
  });
});
