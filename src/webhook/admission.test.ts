import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/object-meta.ts';
import { decide, ownerOf, type AdmissionRequest, type Owner } from './admission.ts';

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
): AdmissionRequest => ({
  uid: 'u',
  operation,
  userInfo: { username: user },
  oldObject: object(1),
  object: after ?? null,
});

const owner = (state: Owner['state']): Owner => ({ namespace: 'a', name: 'shop', state });
const live = { deleting: false, ignoreFields: ['spec.replicas'] };

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
  ])('%s → allowed=%s', (_name, req, who, allowed) => {
    expect(decide(req, 'system:serviceaccount:stencil:stencil', who).allowed).toBe(allowed);
  });

  it('names the owner and the first changed path', () => {
    expect(decide(request('UPDATE', object(1, 'evil')), 'op', owner(live)).message).toBe(
      'Deployment a/web is managed by TemplateInstance a/shop (sync mode strict): spec.template.spec.containers[0].image may not be changed; change the TemplateInstance or its Template instead',
    );
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
