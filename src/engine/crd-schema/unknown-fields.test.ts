import { describe, expect, it } from 'vitest';
import { validateAgainstCrd } from './schema-validation.ts';
import { unknownFields } from './unknown-fields.ts';

const schema = {
  type: 'object',
  properties: {
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      properties: {
        mode: { type: 'string' },
        list: { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        opaque: { type: 'object' },
      },
    },
  },
};

describe('unknownFields (kubectl strict field validation)', () => {
  it.each([
    ['declared fields only', { spec: { mode: 'x', list: [{ a: 'b' }] } }, []],
    ['a typo at the top of spec', { spec: { syncMode: 'revert' } }, ['spec.syncMode']],
    ['inside a list item', { spec: { list: [{ a: 'b' }, { b: 'c' }] } }, ['spec.list[1].b']],
    ['map keys are the map', { spec: { labels: { any: 'thing' } } }, []],
    [
      'preserved and unlisted objects are not judged',
      { spec: { free: { x: 1 }, opaque: { y: 2 } } },
      [],
    ],
    ['metadata is ObjectMeta to judge', { metadata: { name: 'n', bogus: 1 } }, []],
    ['unknown at the root', { spce: {} }, ['spce']],
  ])('%s', (_name, value, expected) => {
    expect(unknownFields(value, schema)).toEqual(expected);
  });

  it('lists at most 20', () => {
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, i]));
    expect(unknownFields({ spec: many }, schema)).toHaveLength(20);
  });

  it('makes validate refuse a typo in a Template, naming the path (issue #43)', () => {
    const problems = validateAgainstCrd('Template', {
      apiVersion: 'stencil.dev/v1alpha1',
      kind: 'Template',
      metadata: { name: 't', namespace: 'platform' },
      spec: { syncMode: 'revert', targetNamespaces: { names: ['team-a'] }, handlebars: 'x: 1' },
    });
    expect(problems.map((p) => p.message)).toEqual(
      expect.arrayContaining([
        'unknown field "spec.syncMode"',
        'unknown field "spec.targetNamespaces.names"',
      ]),
    );
  });
});
