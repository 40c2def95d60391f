import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/object-meta.ts';
import {
  decide,
  exemptionOf,
  ownerOf,
  type AdmissionRequest,
  type Exemptions,
  type Owner,
} from './admission.ts';

const object = (replicas: number, image = 'nginx'): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'a',
    annotations: { 'stencil.dev/instance-ref': 'a/shop' },
    resourceVersion: String(replicas),
  },
  spec: { replicas, template: { spec: { containers: [{ name: 'c', image }] } } },
});

const request = (
  operation: AdmissionRequest['operation'],
  after?: KubeObject,
  user = 'alice',
  groups: string[] = ['system:masters', 'system:authenticated'],
): AdmissionRequest => ({
  uid: 'u',
  operation,
  userInfo: { username: user, groups },
  oldObject: object(1),
  object: after ?? null,
});

const owner = (state: Owner['state']): Owner => ({ namespace: 'a', name: 'shop', state });
const live = {
  deleting: false,
  ignoreFields: ['spec.replicas'],
  template: { namespace: 'platform', name: 'web-app' },
};
const OPERATOR = 'system:serviceaccount:stencil:stencil';
const exemptions: Exemptions = { operatorUsername: OPERATOR, breakGlassGroups: [] };

describe('the strict-mode admission decision', () => {
  it.each([
    [
      'the operator itself',
      request('DELETE', undefined, 'system:serviceaccount:stencil:stencil'),
      owner(live),
      true,
    ],
    ['an update of an ignored field', request('UPDATE', object(3)), owner(live), true],
    [
      'an update that changes nothing managed (resourceVersion only)',
      request('UPDATE', {
        ...object(1),
        metadata: { ...object(1).metadata, resourceVersion: '99' },
      }),
      owner(live),
      true,
    ],
    [
      'a delete while the owner is being deleted',
      request('DELETE'),
      owner({ ...live, deleting: true }),
      true,
    ],
    ['anything once the owner is gone', request('DELETE'), owner(undefined), true],
    ['an update of a managed field', request('UPDATE', object(1, 'evil')), owner(live), false],
    ['a delete', request('DELETE'), owner(live), false],
    [
      'a delete by an admin who is not the operator (system:masters)',
      request('DELETE', undefined, 'admin', ['system:masters']),
      owner(live),
      false,
    ],
    [
      "a delete by another ServiceAccount of the operator's namespace",
      request('DELETE', undefined, 'system:serviceaccount:stencil:default', [
        'system:serviceaccounts',
        'system:serviceaccounts:stencil',
      ]),
      owner(live),
      false,
    ],
  ])('%s → allowed=%s', (_name, req, who, allowed) => {
    expect(decide(req, exemptions, who).allowed).toBe(allowed);
  });

  it('names the owner, the first changed path, and the instance and Template to edit', () => {
    expect(decide(request('UPDATE', object(1, 'evil')), exemptions, owner(live)).message).toBe(
      'Deployment a/web is managed by TemplateInstance a/shop (sync mode strict): spec.template.spec.containers[0].image may not be changed; edit TemplateInstance a/shop or its Template platform/web-app instead',
    );
    expect(decide(request('DELETE'), exemptions, owner(live)).message).toBe(
      'Deployment a/web is managed by TemplateInstance a/shop (sync mode strict): it may not be deleted; delete TemplateInstance a/shop, or edit it or its Template platform/web-app so that it no longer renders this object',
    );
    const noTemplate = owner({ ...live, template: undefined });
    expect(decide(request('DELETE'), exemptions, noTemplate).message).toContain(
      'or edit it or its Template so that',
    );
  });

  it('lets a member of a configured break-glass group through, and nobody by group otherwise', () => {
    const sre = request('DELETE', undefined, 'bob', ['sre', 'system:authenticated']);
    expect(decide(sre, exemptions, owner(live)).allowed).toBe(false);
    const withBreakGlass = { ...exemptions, breakGlassGroups: ['oncall', 'sre'] };
    expect(decide(sre, withBreakGlass, owner(live)).allowed).toBe(true);
    expect(exemptionOf(sre.userInfo, withBreakGlass)).toEqual({ by: 'break-glass', group: 'sre' });
    expect(exemptionOf({ username: OPERATOR }, withBreakGlass)).toEqual({ by: 'operator' });
    expect(exemptionOf({ username: 'alice', groups: ['dev'] }, withBreakGlass)).toBeUndefined();
  });

  it("tells the operator acting as a Template's ServiceAccount from that ServiceAccount itself", () => {
    const account = 'system:serviceaccount:team-a:templates';
    const groups = ['system:serviceaccounts', 'system:serviceaccounts:team-a'];
    // The operator's impersonated write carries the extra only the operator may impersonate.
    const impersonated = {
      username: account,
      groups,
      extra: { 'stencil.dev/impersonated-by': [OPERATOR] },
    };
    expect(exemptionOf(impersonated, exemptions)).toEqual({ by: 'operator' });
    // A Pod's token of the same ServiceAccount has none; nor does a forged one of another name.
    expect(exemptionOf({ username: account, groups }, exemptions)).toBeUndefined();
    const forged = { ...impersonated, extra: { 'stencil.dev/impersonated-by': ['mallory'] } };
    expect(exemptionOf(forged, exemptions)).toBeUndefined();
    expect(
      exemptionOf(impersonated, { operatorUsername: '', breakGlassGroups: [] }),
    ).toBeUndefined();
  });

  it('exempts nobody when the operator username is unknown', () => {
    const unknown = { operatorUsername: '', breakGlassGroups: [] };
    expect(exemptionOf({ username: '' }, unknown)).toBeUndefined();
    expect(exemptionOf({}, unknown)).toBeUndefined();
  });

  it('finds the owner from the instance-ref annotation, else the labels', () => {
    expect(ownerOf(object(1))).toEqual({ namespace: 'a', name: 'shop' });
    expect(
      ownerOf({
        ...object(1),
        metadata: {
          name: 'x',
          labels: { 'stencil.dev/instance-namespace': 'b', 'stencil.dev/instance-name': 'i' },
        },
      }),
    ).toEqual({ namespace: 'b', name: 'i' });
    expect(ownerOf({ ...object(1), metadata: { name: 'x' } })).toBeUndefined();
  });
});
