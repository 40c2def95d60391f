import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/object-meta.ts';
import type { AdmissionRequest } from './admission.ts';
import { decideRequester } from './requester-admission.ts';

const KEY = 'stencil.dev/requester';
const ALICE = '{"username":"alice","uid":"a-1","groups":["team-a","system:authenticated"]}';
const OPERATOR = 'system:serviceaccount:stencil-system:stencil';

const instance = (annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'stencil.dev/v1alpha1',
  kind: 'TemplateInstance',
  metadata: { name: 'shop', namespace: 'team-a', ...(annotations ? { annotations } : {}) },
});

const request = (
  operation: AdmissionRequest['operation'],
  object: KubeObject,
  oldObject?: KubeObject,
  username = 'alice',
): AdmissionRequest => ({
  uid: 'u',
  operation,
  userInfo: { username, uid: 'a-1', groups: ['team-a', 'system:authenticated'] },
  object,
  oldObject,
});

describe('the requester record (ADR 0020)', () => {
  it.each([
    [
      'a create without annotations gets the map with the creator',
      request('CREATE', instance()),
      {
        allowed: true,
        patch: [{ op: 'add', path: '/metadata/annotations', value: { [KEY]: ALICE } }],
      },
    ],
    [
      'a create with other annotations gets the one key (the slash escaped)',
      request('CREATE', instance({ team: 'a' })),
      {
        allowed: true,
        patch: [{ op: 'add', path: '/metadata/annotations/stencil.dev~1requester', value: ALICE }],
      },
    ],
    [
      'a create that writes a requester by hand is refused, naming the field',
      request('CREATE', instance({ [KEY]: '{"username":"system:admin"}' })),
      {
        allowed: false,
        message: expect.stringContaining(
          'metadata.annotations["stencil.dev/requester"] is written by',
        ),
      },
    ],
    [
      'the operator may create with one (a Set copies its own requester)',
      request('CREATE', instance({ [KEY]: ALICE }), undefined, OPERATOR),
      { allowed: true },
    ],
    [
      'an update that keeps it passes unchanged',
      request('UPDATE', instance({ [KEY]: ALICE, x: '1' }), instance({ [KEY]: ALICE })),
      { allowed: true },
    ],
    [
      'an update that changes it is refused',
      request('UPDATE', instance({ [KEY]: '{"username":"bob"}' }), instance({ [KEY]: ALICE })),
      { allowed: false, message: expect.stringContaining('may not be changed') },
    ],
    [
      'an update that adds one to an instance that had none is refused',
      request('UPDATE', instance({ [KEY]: ALICE }), instance()),
      { allowed: false, message: expect.stringContaining('may not be changed') },
    ],
    [
      'an update that drops it (a re-apply) gets it back',
      request('UPDATE', instance({ other: 'x' }), instance({ [KEY]: ALICE })),
      {
        allowed: true,
        patch: [{ op: 'add', path: '/metadata/annotations/stencil.dev~1requester', value: ALICE }],
      },
    ],
    [
      'an update with no annotations left gets the map back',
      request('UPDATE', instance(), instance({ [KEY]: ALICE })),
      {
        allowed: true,
        patch: [{ op: 'add', path: '/metadata/annotations', value: { [KEY]: ALICE } }],
      },
    ],
    [
      'the operator may change it (a Set re-stamping its instances)',
      request(
        'UPDATE',
        instance({ [KEY]: '{"username":"carol"}' }),
        instance({ [KEY]: ALICE }),
        OPERATOR,
      ),
      { allowed: true },
    ],
  ] as [string, AdmissionRequest, object][])('%s', (_name, admission, expected) => {
    expect(decideRequester(admission, OPERATOR)).toEqual(expected);
  });

  it('records nobody for an anonymous create, and the operator username "" exempts nobody', () => {
    expect(decideRequester({ ...request('CREATE', instance()), userInfo: {} }, OPERATOR)).toEqual({
      allowed: true,
    });
    const forged = { ...request('CREATE', instance({ [KEY]: ALICE })), userInfo: { username: '' } };
    expect(decideRequester(forged, '').allowed).toBe(false);
  });
});
