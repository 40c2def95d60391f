import { describe, expect, it } from 'vitest';
import { applyDefaults } from './structural-defaults.ts';

const schema = {
  type: 'object',
  properties: {
    a: { type: 'string', default: 'A' },
    n: { type: 'string', nullable: true, default: 'N' },
    nested: {
      type: 'object',
      default: {},
      properties: { inner: { type: 'integer', default: 1 } },
    },
    list: {
      type: 'array',
      items: {
        type: 'object',
        default: { k: 'v' },
        properties: { d: { type: 'string', default: 'D' } },
      },
    },
    map: { type: 'object', additionalProperties: { type: 'string', default: 'M' } },
    open: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  },
};

describe('applyDefaults (the API server structural defaulting)', () => {
  it.each([
    [
      'a missing property takes its default, and defaulting goes on inside it',
      {},
      { a: 'A', n: 'N', nested: { inner: 1 } },
    ],
    ['a value given stays', { a: 'mine' }, { a: 'mine', n: 'N', nested: { inner: 1 } }],
    [
      'a null where the schema is not nullable takes the default',
      { a: null },
      { a: 'A', n: 'N', nested: { inner: 1 } },
    ],
    [
      'a null where the schema is nullable stays null',
      { n: null },
      { a: 'A', n: null, nested: { inner: 1 } },
    ],
    [
      'list items: a null item takes the items default, and each item its own defaults',
      { list: [null, {}] },
      { a: 'A', n: 'N', nested: { inner: 1 }, list: [{ k: 'v', d: 'D' }, { d: 'D' }] },
    ],
    [
      'map values: a null takes the default',
      { map: { x: null, y: 'y' } },
      { a: 'A', n: 'N', nested: { inner: 1 }, map: { x: 'M', y: 'y' } },
    ],
    [
      'unknown fields and preserved ones are left as they are',
      { open: { z: null }, extra: 1 },
      { a: 'A', n: 'N', nested: { inner: 1 }, open: { z: null }, extra: 1 },
    ],
  ])('%s', (_name, input, expected) => {
    const before = JSON.stringify(input);
    expect(applyDefaults(input, schema)).toEqual(expected);
    expect(JSON.stringify(input)).toBe(before);
  });
});
