// The operator identity `npm run local` and the integration tests install: the chart's RBAC from
// config/deploy/stencil.yaml, and its relocation to another ServiceAccount.
import { describe, expect, it } from 'vitest';
import { deployRbac, deployUserRoles, relocateRbac } from '../../tools/local/operator-identity.ts';

describe("the operator's identity", () => {
  it('is the chart RBAC of config/deploy: ServiceAccount stencil-system/stencil and its roles', () => {
    const rbac = deployRbac();
    expect(
      rbac.map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort(),
    ).toEqual([
      'ClusterRole /stencil',
      'ClusterRoleBinding /stencil',
      'Role stencil-system/stencil',
      'RoleBinding stencil-system/stencil',
      'ServiceAccount stencil-system/stencil',
    ]);
  });

  it("leaves out the chart's roles for people, which bind no ServiceAccount", () => {
    const roles = deployUserRoles();
    expect(roles.map((r) => r.metadata.name).sort()).toEqual(['stencil:edit', 'stencil:view']);
    // Folded into Kubernetes' own roles; never a write on Templates, revisions or sets.
    for (const role of roles) {
      expect(role.metadata.labels?.['rbac.authorization.k8s.io/aggregate-to-edit']).toBe('true');
      const rules = (role as { rules?: { resources: string[]; verbs: string[] }[] }).rules ?? [];
      for (const rule of rules)
        if (rule.verbs.some((v) => v !== 'get' && v !== 'list' && v !== 'watch'))
          expect(rule.resources).toEqual(['templateinstances']);
    }
    const names = new Set(deployRbac().map((o) => o.metadata.name));
    for (const role of roles) expect(names.has(role.metadata.name)).toBe(false);
  });

  it('moves to another ServiceAccount with every name, namespace, roleRef and subject', () => {
    const account = { namespace: 'ops', name: 'stencil-x' };
    const original = deployRbac();
    const moved = relocateRbac(original, account);
    for (const object of moved) {
      expect(object.metadata.name).toBe('stencil-x');
      if (object.metadata.namespace !== undefined) expect(object.metadata.namespace).toBe('ops');
      const binding = object as { roleRef?: { name: string }; subjects?: unknown[] };
      if (binding.roleRef) expect(binding.roleRef.name).toBe('stencil-x');
      if (binding.subjects)
        expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', ...account }]);
    }
    expect(original).toEqual(deployRbac());
  });
});
