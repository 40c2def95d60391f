import { describe, expect, it } from 'vitest';
import type { JsonValue } from '../../api/object-meta.ts';
import { MAX_MERGE_DEPTH, mergeParameterValue, type MergeInput } from './value-merge.ts';

function merged(input: Omit<MergeInput, 'name'>): JsonValue {
  const result = mergeParameterValue({ name: 'p', ...input });
  if (!result.ok) throw new Error(result.problems.map((p) => p.message).join('; '));
  return result.value;
}

function refused(input: Omit<MergeInput, 'name'>): string {
  const result = mergeParameterValue({ name: 'p', ...input });
  if (result.ok) throw new Error('expected a refusal');
  expect(result.problems[0]).toMatchObject({ path: 'parameters.p', reason: 'InvalidParameter' });
  return result.problems[0]!.message;
}

function nested(depth: number): JsonValue {
  let value: JsonValue = 'leaf';
  for (let i = 0; i < depth; i++) value = { k: value };
  return value;
}

describe('replace', () => {
  it('gives the instance value as it is, whatever the default', () => {
    expect(merged({ strategy: 'replace', base: { a: 1, b: 2 }, override: { a: 3 } })).toEqual({
      a: 3,
    });
  });
});

describe('deep (Helm map merge)', () => {
  it('merges maps recursively, the instance winning, and replaces lists whole', () => {
    const base = { resources: { limits: { cpu: '1', memory: '1Gi' } }, args: ['a', 'b'], x: 1 };
    const override = { resources: { limits: { memory: '2Gi' } }, args: ['c'], y: true };
    expect(merged({ strategy: 'deep', base, override })).toEqual({
      resources: { limits: { cpu: '1', memory: '2Gi' } },
      args: ['c'],
      x: 1,
      y: true,
    });
  });

  it('lists the default keys first, then the new keys in the instance order', () => {
    const value = merged({ strategy: 'deep', base: { b: 1, a: 1 }, override: { c: 2, a: 2 } });
    expect(Object.keys(value as object)).toEqual(['b', 'a', 'c']);
  });

  it('removes a key the instance sets to null, as Helm does', () => {
    expect(
      merged({ strategy: 'deep', base: { a: 1, b: { c: 1 } }, override: { b: null } }),
    ).toEqual({ a: 1 });
  });

  it('lets a scalar or list replace a map and a map replace a scalar', () => {
    expect(merged({ strategy: 'deep', base: { a: { b: 1 } }, override: { a: [1] } })).toEqual({
      a: [1],
    });
    expect(merged({ strategy: 'deep', base: { a: 'x' }, override: { a: { b: 1 } } })).toEqual({
      a: { b: 1 },
    });
  });

  it('does not change either input', () => {
    const base = { a: { b: 1 } };
    const override = { a: { c: 2 } };
    merged({ strategy: 'deep', base, override });
    expect(base).toEqual({ a: { b: 1 } });
    expect(override).toEqual({ a: { c: 2 } });
  });

  it('keeps __proto__ and constructor as plain keys and pollutes no prototype', () => {
    const override = JSON.parse(
      '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}',
    ) as JsonValue;
    const value = merged({ strategy: 'deep', base: { a: 1 }, override }) as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['a', '__proto__', 'constructor']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(value)).toBeNull();
    expect(JSON.parse(JSON.stringify(value))).toEqual(
      JSON.parse(
        '{"a":1,"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}',
      ),
    );
  });

  it(`refuses a value nested deeper than ${MAX_MERGE_DEPTH} levels, naming the parameter`, () => {
    expect(refused({ strategy: 'deep', base: {}, override: nested(MAX_MERGE_DEPTH + 1) })).toBe(
      `parameter "p": cannot merge (deep): nests deeper than ${MAX_MERGE_DEPTH} levels (the merge limit)`,
    );
    expect(refused({ strategy: 'deep', base: nested(10_000), override: {} })).toContain(
      'nests deeper',
    );
    expect(merged({ strategy: 'deep', base: {}, override: nested(MAX_MERGE_DEPTH) })).toEqual(
      nested(MAX_MERGE_DEPTH),
    );
  });
});

describe('union-by-key', () => {
  const base: JsonValue = [
    { name: 'http', port: 80, protocol: 'TCP' },
    { name: 'metrics', port: 9090 },
  ];

  it("merges items of the same key deep, keeps the default's order, then appends new items", () => {
    const override = [
      { name: 'grpc', port: 9000 },
      { name: 'http', port: 8080 },
      { name: 'admin', port: 9001 },
    ];
    expect(merged({ strategy: 'union-by-key', mergeKey: 'name', base, override })).toEqual([
      { name: 'http', port: 8080, protocol: 'TCP' },
      { name: 'metrics', port: 9090 },
      { name: 'grpc', port: 9000 },
      { name: 'admin', port: 9001 },
    ]);
  });

  it('tells keys of different types apart (1 is not "1")', () => {
    expect(
      merged({
        strategy: 'union-by-key',
        mergeKey: 'id',
        base: [{ id: 1, a: 1 }],
        override: [{ id: '1', b: 1 }],
      }),
    ).toEqual([
      { id: 1, a: 1 },
      { id: '1', b: 1 },
    ]);
  });

  it('refuses an item without the key, an item that is not a map, and a repeated key', () => {
    expect(
      refused({ strategy: 'union-by-key', mergeKey: 'name', base, override: [{ port: 1 }] }),
    ).toBe(
      'parameter "p": cannot merge (union-by-key): the value item 0 has no scalar "name" (the mergeKey)',
    );
    expect(
      refused({ strategy: 'union-by-key', mergeKey: 'name', base, override: ['x'] }),
    ).toContain('the value item 0 is not a map');
    expect(
      refused({
        strategy: 'union-by-key',
        mergeKey: 'name',
        base,
        override: [{ name: 'a' }, { name: 'a' }],
      }),
    ).toContain('the value items 0 and 1 have the same "name" "a"');
  });

  it('never quotes the key of a Secret-derived item', () => {
    const message = refused({
      strategy: 'union-by-key',
      mergeKey: 'name',
      base,
      override: [{ name: 's3cr3t-key' }, { name: 's3cr3t-key' }],
      secret: true,
    });
    expect(message).not.toContain('s3cr3t');
    expect(message).toContain('items 0 and 1 have the same "name"');
  });
});
