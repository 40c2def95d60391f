// The conversion npm run generate and the operator share: what the generator refuses (so that a
// new keyword is decided), the operator leaves out and goes on with, accepting more, never less.
import { describe, expect, it } from 'vitest';
import { compactDefinition, compactNode, kindsOfDefinition } from './openapi-definitions.ts';

const REF = '#/components/schemas/';

function lenient(node: Record<string, unknown>): {
  out: Record<string, unknown>;
  refused: string[];
} {
  const refused: string[] = [];
  const out = compactNode(node, 'io.k8s.api.example.v1.Gadget', (where, what) =>
    refused.push(`${where}: ${what}`),
  );
  return { out, refused };
}

describe('compactNode', () => {
  it('keeps what validation needs, drops documentation and hints, names refs by definition', () => {
    const node = {
      description: 'A gadget.',
      type: 'object',
      required: ['size'],
      properties: {
        size: { description: 'How big.', type: 'integer', format: 'int32', default: 1 },
        ratio: { type: 'number', format: 'double' },
        spec: {
          description: 'Its spec.',
          default: {},
          allOf: [{ $ref: `${REF}io.k8s.api.example.v1.GadgetSpec` }],
        },
        ports: {
          type: 'array',
          items: { $ref: `${REF}io.k8s.api.core.v1.ContainerPort` },
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
          'x-kubernetes-patch-strategy': 'merge',
        },
        tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' },
        finalizers: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
      },
      'x-kubernetes-group-version-kind': [
        { group: 'example.k8s.io', version: 'v1', kind: 'Gadget' },
      ],
    };
    expect(lenient(node)).toEqual({
      refused: [],
      out: {
        type: 'object',
        required: ['size'],
        properties: {
          size: { type: 'integer', format: 'int32' },
          ratio: { type: 'number' },
          spec: { $ref: 'io.k8s.api.example.v1.GadgetSpec' },
          ports: {
            type: 'array',
            items: { $ref: 'io.k8s.api.core.v1.ContainerPort' },
            'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
          },
          tags: { type: 'array', items: { type: 'string' } },
          finalizers: {
            type: 'array',
            items: { type: 'string' },
            'x-kubernetes-list-type': 'set',
          },
        },
      },
    });
  });

  it.each([
    [
      'a keyword the dialect does not know',
      { type: 'string', maxLength: 3 },
      { type: 'string' },
      'io.k8s.api.example.v1.Gadget.name: keyword maxLength is new: decide whether validation needs it',
    ],
    [
      'a format it does not know',
      { type: 'string', format: 'uuid' },
      { type: 'string' },
      'io.k8s.api.example.v1.Gadget.name: unknown format uuid',
    ],
    [
      'allOf with two entries',
      { allOf: [{ $ref: `${REF}a.A` }, { $ref: `${REF}b.B` }], description: 'two' },
      {},
      'io.k8s.api.example.v1.Gadget.name: allOf with 2 entries',
    ],
    [
      'a $ref with siblings',
      { $ref: `${REF}a.A`, type: 'object' },
      { $ref: 'a.A' },
      'io.k8s.api.example.v1.Gadget.name: $ref with siblings',
    ],
  ])('at run time, leaves out %s and says where', (_what, name, expected, refusal) => {
    const { out, refused } = lenient({ type: 'object', properties: { name } });
    expect(out).toEqual({ type: 'object', properties: { name: expected } });
    expect(refused).toEqual([refusal]);
  });

  it('for the generator, a refusal that throws stops it', () => {
    const refuse = (where: string, what: string): never => {
      throw new Error(`${where}: ${what}`);
    };
    expect(() =>
      compactNode(
        { type: 'object', 'x-kubernetes-new': true },
        'io.k8s.api.example.v1.Gadget',
        refuse,
      ),
    ).toThrow('io.k8s.api.example.v1.Gadget: keyword x-kubernetes-new is new');
  });

  it('writes the definitions with their own JSON decoding in their special form', () => {
    const quantity = compactDefinition(
      'io.k8s.apimachinery.pkg.api.resource.Quantity',
      { type: 'string', description: 'a quantity' },
      () => undefined,
    );
    expect(quantity).toEqual({ type: ['string', 'number'], format: 'quantity' });
  });
});

describe('kindsOfDefinition', () => {
  it('reads the kinds of a definition by apiVersion, core group included', () => {
    const gvk = [
      { group: '', version: 'v1', kind: 'Pod' },
      { group: 'apps', version: 'v1', kind: 'Deployment' },
    ];
    expect(
      kindsOfDefinition('io.k8s.api.x.v1.X', { 'x-kubernetes-group-version-kind': gvk }),
    ).toEqual([
      { apiVersion: 'v1', kind: 'Pod' },
      { apiVersion: 'apps/v1', kind: 'Deployment' },
    ]);
  });

  it('gives no kind to meta/v1 request and response bodies (DeleteOptions, WatchEvent)', () => {
    const gvk = [{ group: 'apps', version: 'v1', kind: 'DeleteOptions' }];
    const name = 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions';
    expect(kindsOfDefinition(name, { 'x-kubernetes-group-version-kind': gvk })).toEqual([]);
  });
});
