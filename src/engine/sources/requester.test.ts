import { describe, expect, it } from 'vitest';
import { formatRequester, requesterFrom, requesterOf } from './requester.ts';

const on = (value?: string): { metadata: { annotations?: Record<string, string> } } => ({
  metadata: value === undefined ? {} : { annotations: { 'stencil.dev/requester': value } },
});

describe('the recorded requester (ADR 0020)', () => {
  it('round-trips what admission records', () => {
    const requester = requesterFrom({
      username: 'alice',
      uid: 'u-1',
      groups: ['team-a'],
      extra: { scopes: ['x'] },
    })!;
    expect(requesterOf(on(formatRequester(requester)))).toEqual(requester);
  });

  it('leaves out empty parts and records nobody without a username', () => {
    expect(requesterFrom({ username: 'bob', groups: [], extra: {} })).toEqual({ username: 'bob' });
    expect(requesterFrom({ groups: ['system:unauthenticated'] })).toBeUndefined();
  });

  it.each([
    ['no annotation', undefined],
    ['text that is not JSON', 'alice'],
    ['a JSON string', '"alice"'],
    ['a list', '["alice"]'],
    ['no username', '{"groups":["a"]}'],
    ['an empty username', '{"username":""}'],
    ['a number as uid', '{"username":"a","uid":1}'],
    ['groups that are not strings', '{"username":"a","groups":[1]}'],
    ['extra values that are not lists', '{"username":"a","extra":{"k":"v"}}'],
  ])('reads %s as no requester (denied, never granted)', (_name, value) => {
    expect(requesterOf(on(value))).toBeUndefined();
  });
});
