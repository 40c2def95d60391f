import { describe, expect, it } from 'vitest';
import type { Template } from '../../api/template.ts';
import {
  actingIdentity,
  parseServiceAccount,
  serviceAccountUsername,
  type TenancyPolicy,
} from './acting-identity.ts';

const template = (serviceAccountName?: string): Template => ({
  apiVersion: 'stencil.dev/v1alpha1',
  kind: 'Template',
  metadata: { name: 'web', namespace: 'platform' },
  spec: { handlebars: 'x', ...(serviceAccountName ? { serviceAccountName } : {}) },
});

describe('who a Template acts as', () => {
  const cases: [string, string | undefined, TenancyPolicy, string | undefined][] = [
    ['the ServiceAccount it names', 'deployer', { actAs: 'service-account' }, 'platform/deployer'],
    [
      'the one it names, over the default',
      'deployer',
      { actAs: 'service-account', defaultServiceAccount: 'stencil' },
      'platform/deployer',
    ],
    [
      "the default name, in the Template's namespace",
      undefined,
      { actAs: 'service-account', defaultServiceAccount: 'stencil' },
      'platform/stencil',
    ],
    ['the operator itself in single-team mode', 'deployer', { actAs: 'operator' }, undefined],
  ];
  it.each(cases)('%s', (_what, name, policy, expected) => {
    const identity = actingIdentity(template(name), policy);
    expect(identity.ok).toBe(true);
    const account = identity.ok ? identity.serviceAccount : undefined;
    expect(account && `${account.namespace}/${account.name}`).toBe(expected);
  });

  it('nobody when it names none and there is no default: refused, naming the Template', () => {
    const identity = actingIdentity(template(), { actAs: 'service-account' });
    expect(identity).toMatchObject({
      ok: false,
      problem: { reason: 'ServiceAccountNotSet' },
    });
    expect(!identity.ok && identity.problem.message).toContain('Template platform/web');
  });

  it('names a ServiceAccount as the API server does, and reads back what status records', () => {
    expect(serviceAccountUsername({ namespace: 'a', name: 'b' })).toBe('system:serviceaccount:a:b');
    expect(parseServiceAccount('a/b')).toEqual({ namespace: 'a', name: 'b' });
    expect(parseServiceAccount('a/b/c')).toBeUndefined();
    expect(parseServiceAccount(undefined)).toBeUndefined();
  });
});
