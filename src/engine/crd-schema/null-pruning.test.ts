// pruneNulls drops nulls the API server would prune, and keeps nulls it would keep.
import { describe, expect, it } from 'vitest';
import { pruneNulls } from './null-pruning.ts';

const schema = {
  properties: {
    spec: {
      properties: {
        parameters: {
          items: {
            properties: {
              name: { type: 'string' },
              value: { 'x-kubernetes-preserve-unknown-fields': true },
              defaultValue: { 'x-kubernetes-preserve-unknown-fields': true },
              note: { type: 'string', nullable: true },
              mode: { type: 'string', default: 'off' },
            },
          },
        },
      },
    },
  },
};

describe('pruneNulls', () => {
  it('drops a null in a field that is neither nullable nor defaulted', () => {
    const object = { spec: { parameters: [{ name: 'a', value: {}, defaultValue: null }] } };
    expect(pruneNulls(object, schema)).toEqual({
      spec: { parameters: [{ name: 'a', value: {} }] },
    });
  });

  it('keeps a null in a nullable or defaulted field, in unknown data, and outside the schema', () => {
    const object = {
      spec: { parameters: [{ name: 'a', value: { x: null }, note: null, mode: null }] },
      extra: null,
    };
    expect(pruneNulls(object, schema)).toEqual(object);
  });
});
