import { describe, expect, it } from 'vitest';
import type { TemplateInstance } from '../../api/template-instance.ts';
import type { Requester } from '../../engine/sources/requester.ts';
import type { ReadAccess } from '../../engine/sources/source-port.ts';
import type { AccessReview, ClusterPort } from '../cluster-port.ts';
import { requesterAuthorizer } from './requester-authorization.ts';

/** Only reviewAccess is used: it answers from `grants` and records each review. */
function reviewing(grants: string[], asked: string[]): ClusterPort {
  const reviewAccess = (user: Requester, access: ReadAccess): Promise<AccessReview> => {
    const key = `${user.username} ${access.verb} ${access.kind} ${access.namespace ?? '*'}/${access.name ?? ''}`;
    asked.push(key);
    return Promise.resolve(
      grants.includes(key) ? { allowed: true } : { allowed: false, reason: 'no RBAC rule' },
    );
  };
  return { reviewAccess } as unknown as ClusterPort;
}

const instance = (requester?: string): TemplateInstance => ({
  apiVersion: 'stencil.dev/v1alpha1',
  kind: 'TemplateInstance',
  metadata: {
    name: 'shop',
    namespace: 'team-a',
    ...(requester === undefined ? {} : { annotations: { 'stencil.dev/requester': requester } }),
  },
  spec: { templateRef: { name: 't' } },
});

const secret: ReadAccess = {
  verb: 'get',
  apiVersion: 'v1',
  kind: 'Secret',
  namespace: 'team-a',
  name: 'db',
};

describe('reads authorized as the requester (ADR 0020)', () => {
  it('asks as the recorded user, once per distinct read in a pass', async () => {
    const asked: string[] = [];
    const authorize = requesterAuthorizer(
      reviewing(['alice get Secret team-a/db'], asked),
      instance('{"username":"alice","groups":["team-a"]}'),
    );
    expect(await authorize(secret)).toEqual({ allowed: true });
    expect(await authorize(secret)).toEqual({ allowed: true });
    expect(asked).toEqual(['alice get Secret team-a/db']);
  });

  it('names the user, the verb and the object in a denial, with the authorizer’s reason', async () => {
    const authorize = requesterAuthorizer(reviewing([], []), instance('{"username":"alice"}'));
    expect(await authorize({ ...secret, verb: 'list', name: undefined })).toEqual({
      allowed: false,
      message: expect.stringMatching(
        /^user "alice", who created the instance, may not list Secret objects in namespace "team-a" \(no RBAC rule\)/,
      ),
    });
  });

  it.each([
    ['no record', undefined],
    ['a record that does not parse', '{"user":"alice"}'],
  ])('denies every read of an instance with %s, asking nobody', async (_name, record) => {
    const asked: string[] = [];
    const authorize = requesterAuthorizer(reviewing([], asked), instance(record));
    expect(await authorize(secret)).toEqual({
      allowed: false,
      message: expect.stringContaining('the instance records no requester'),
    });
    expect(asked).toEqual([]);
  });
});
