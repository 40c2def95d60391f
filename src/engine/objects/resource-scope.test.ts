import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/object-meta.ts';
import { builtinScope, placeResources, type Placement } from './resource-scope.ts';

const cm = (name: string, namespace?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(namespace ? { namespace } : {}) },
});
const ns = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name },
});
const placement = (spec: Placement['spec'] = {}): Placement => ({
  instanceNamespace: 'team-a',
  spec,
  scopeOf: builtinScope,
});

describe('placing rendered resources (SPEC §5 namespaces)', () => {
  it("defaults a namespaced resource to the instance's namespace", () => {
    const placed = placeResources([cm('a')], placement());
    expect(placed.ok && placed.value[0]?.metadata.namespace).toBe('team-a');
  });

  it('refuses a namespaced resource in another namespace, naming it', () => {
    const placed = placeResources([cm('a'), cm('b', 'kube-system')], placement());
    expect(!placed.ok && placed.problems[0]).toMatchObject({
      reason: 'TemplateExecutionFailed',
      path: 'document 2',
      message: expect.stringContaining('ConfigMap "b" is in namespace "kube-system"'),
    });
  });

  it('allows another namespace when the Template sets allowCrossNamespaceResources', () => {
    expect(
      placeResources([cm('b', 'kube-system')], placement({ allowCrossNamespaceResources: true }))
        .ok,
    ).toBe(true);
  });

  it('refuses a cluster-scoped resource unless allowClusterScopedResources', () => {
    const refused = placeResources([ns('tenant')], placement());
    expect(!refused.ok && refused.problems[0]?.message).toContain('is cluster-scoped');
    const allowed = placeResources(
      [{ ...ns('tenant'), metadata: { name: 'tenant', namespace: 'team-a' } }],
      placement({ allowClusterScopedResources: true }),
    );
    expect(allowed.ok && allowed.value[0]?.metadata).toEqual({ name: 'tenant' });
  });

  it('refuses the same resource rendered twice', () => {
    const placed = placeResources([cm('a'), cm('a', 'team-a')], placement());
    expect(!placed.ok && placed.problems[0]?.message).toContain('rendered twice');
  });

  it('refuses a kind the API server does not serve, as a transient problem (retried)', () => {
    const placed = placeResources([cm('a')], { ...placement(), scopeOf: () => undefined });
    expect(!placed.ok && placed.problems[0]?.message).toContain('does not serve');
    expect(!placed.ok && placed.problems[0]?.transient).toBe(true);
  });

  it.each([
    ['v1', 'Namespace', 'Cluster'],
    ['rbac.authorization.k8s.io/v1', 'ClusterRole', 'Cluster'],
    ['rbac.authorization.k8s.io/v1', 'Role', 'Namespaced'],
    ['apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'Cluster'],
    ['example.com/v1', 'Widget', 'Namespaced'],
  ])('knows offline that %s %s is %s', (apiVersion, kind, scope) => {
    expect(builtinScope(apiVersion, kind)).toBe(scope);
  });
});
