import { describe, expect, it } from 'vitest';
import type { TargetNamespaces } from '../../api/template.ts';
import { aTemplate } from '../../../test/support/builders.ts';
import { selectorMatches, targetNamespaceRefusal } from './target-namespaces.ts';

function refusal(
  target: TargetNamespaces | undefined,
  namespace: string,
  labels: Record<string, string> = {},
): string | undefined {
  const template = aTemplate([], {});
  template.spec.targetNamespaces = target;
  return targetNamespaceRefusal(template, namespace, labels);
}

describe('target namespaces (SPEC §4)', () => {
  it.each([
    ["the Template's own namespace when targetNamespaces is omitted", undefined, 'platform', {}],
    ['any namespace with exactly ["*"]', { explicit: { allow: { literal: ['*'] } } }, 'team-z', {}],
    [
      'a namespace the explicit list names',
      { explicit: { allow: { literal: ['team-a', 'team-b'] } } },
      'team-b',
      {},
    ],
    [
      'a namespace whose labels match the selector',
      { selector: { matchLabels: { tenant: 'true' } } },
      'team-c',
      { tenant: 'true' },
    ],
  ] as const)('allows %s', (_name, target, namespace, labels) => {
    expect(refusal(target as TargetNamespaces | undefined, namespace, labels)).toBeUndefined();
  });

  it.each([
    ['another namespace when targetNamespaces is omitted', undefined, 'team-a', {}],
    [
      'a namespace the list does not name',
      { explicit: { allow: { literal: ['team-b'] } } },
      'team-a',
      {},
    ],
    [
      'a namespace whose labels do not match',
      { selector: { matchLabels: { tenant: 'true' } } },
      'team-a',
      { tenant: 'false' },
    ],
  ] as const)(
    'refuses %s, naming the namespace and the Template',
    (_name, target, namespace, labels) => {
      expect(refusal(target as TargetNamespaces | undefined, namespace, labels)).toMatch(
        /namespace "team-a" may not instantiate Template platform\/web-app/,
      );
    },
  );
});

describe('label selectors', () => {
  it.each([
    [
      { matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] },
      { tier: 'b' },
      true,
    ],
    [{ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['a'] }] }, {}, true],
    [{ matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, {}, false],
    [{ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, { tier: 'x' }, false],
    [{}, { any: 'thing' }, true],
    [{ matchLabels: { constructor: 'x' } }, {}, false],
  ] as const)('%j on %j → %s', (selector, labels, expected) => {
    expect(selectorMatches(selector as never, labels)).toBe(expected);
  });
});
