// The schemas an API server publishes, as the operator checks rendered objects against them: Go
// definitions in the bundle's dialect, CRD kinds with ajv as the CLI checks a CRD file, what the
// dialect does not know left out with a note, and everything not published checked offline.
import { beforeAll, describe, expect, it } from 'vitest';
import { validObjects, widgetCrd } from '../../../test/fixtures/built-in-objects.ts';
import { schemaFileReader } from '../../kubernetes-schema-files.ts';
import { KubernetesSchemas } from './kubernetes-schemas.ts';
import type { ObjectVerdict } from './object-problems.ts';
import { OfflineSchemas, type Kinded } from './object-schema.ts';
import {
  convertPublishedDocument,
  crdDefinitionName,
  PublishedSchemas,
  type OpenApiDocument,
  type PublishedGroupVersion,
} from './published-schemas.ts';

type Json = Record<string, unknown>;

const REF = '#/components/schemas/';
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const offline = new OfflineSchemas(new KubernetesSchemas(schemaFileReader()));

/** A property as the server publishes a reference: wrapped in allOf, with a description. */
const refTo = (name: string): Json => ({
  description: 'See there.',
  allOf: [{ $ref: `${REF}${name}` }],
});

/** The ObjectMeta of a published document (a part of it). */
const OBJECT_META: Json = {
  description: 'Standard object metadata.',
  type: 'object',
  properties: {
    name: { type: 'string' },
    namespace: { type: 'string' },
    labels: { type: 'object', additionalProperties: { type: 'string', default: '' } },
  },
};

/** A Go kind of an aggregated API, with what a later Kubernetes may add to its schemas. */
const GADGETS: OpenApiDocument = {
  components: {
    schemas: {
      'io.k8s.gadgets.pkg.apis.gadgets.v1.Gadget': {
        description: 'A gadget.',
        type: 'object',
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: refTo(META),
          spec: refTo('io.k8s.gadgets.pkg.apis.gadgets.v1.GadgetSpec'),
          status: refTo('io.k8s.gadgets.pkg.apis.gadgets.v1.GadgetStatus'),
        },
        'x-kubernetes-group-version-kind': [
          { group: 'gadgets.example.org', version: 'v1', kind: 'Gadget' },
        ],
      },
      'io.k8s.gadgets.pkg.apis.gadgets.v1.GadgetSpec': {
        type: 'object',
        required: ['size'],
        properties: {
          size: { type: 'integer', format: 'int32' },
          mode: { type: 'string', enum: ['Fast', 'Safe'] },
          name: { type: 'string', maxLength: 8, 'x-kubernetes-validations': [{ rule: 'true' }] },
          extra: refTo('io.k8s.gadgets.pkg.apis.gadgets.v1.Missing'),
        },
      },
      'io.k8s.gadgets.pkg.apis.gadgets.v1.GadgetStatus': {
        type: 'object',
        properties: { phase: { type: 'string', enum: ['Ready'] } },
      },
      [META]: OBJECT_META,
    },
  },
};

const WIDGET_SPEC: Json = {
  type: 'object',
  required: ['size'],
  'x-kubernetes-validations': [{ rule: 'self.size <= 10', message: 'size is at most 10' }],
  properties: {
    size: { type: 'integer', format: 'int32', minimum: 1 },
    port: { 'x-kubernetes-int-or-string': true },
    description: { type: 'string' },
  },
};

/**
 * The document of a CRD's group-version as apiextensions-apiserver publishes it: the schema with
 * documentation, apiVersion/kind described, metadata a $ref to ObjectMeta, the kind named after
 * its group reversed.
 */
function publishedCrd(spec: Json): OpenApiDocument {
  const gvk = { group: 'example.com', version: 'v1', kind: 'Widget' };
  return {
    components: {
      schemas: {
        [crdDefinitionName(gvk)]: {
          type: 'object',
          properties: {
            apiVersion: { description: 'APIVersion defines...', type: 'string' },
            kind: { description: 'Kind is...', type: 'string' },
            metadata: {
              description: 'Standard object metadata.',
              allOf: [{ $ref: `${REF}${META}` }],
            },
            spec: { ...spec, description: 'The widget.' },
          },
          'x-kubernetes-group-version-kind': [gvk],
        },
        [META]: OBJECT_META,
      },
    },
  };
}

/** PublishedSchemas over `documents` (as fetched), prepared for `objects`. */
async function schemasOf(
  documents: PublishedGroupVersion[],
  objects: Json[],
): Promise<PublishedSchemas> {
  const held = new Map(documents.map((d) => [d.apiVersion, d]));
  const schemas = new PublishedSchemas(() => Promise.resolve(held), offline);
  await schemas.prepare(objects as unknown as Kinded[]);
  return schemas;
}

function problems(verdict: ObjectVerdict): { path: string; message: string }[] {
  if (!verdict.checked) throw new Error(`skipped: ${verdict.note}`);
  return verdict.problems.map(({ path, message }) => ({ path, message }));
}

const gadget = (spec: Json, status?: Json): Json => ({
  apiVersion: 'gadgets.example.org/v1',
  kind: 'Gadget',
  metadata: { name: 'g', namespace: 'team-a' },
  spec,
  ...(status ? { status } : {}),
});

const widget = (spec: Json, metadata: Json = { name: 'w', namespace: 'team-a' }): Json => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata,
  spec,
});

describe('a Go kind of a published document', () => {
  const document = convertPublishedDocument('gadgets.example.org/v1', GADGETS);
  let schemas: PublishedSchemas;
  beforeAll(async () => {
    schemas = await schemasOf([document], [gadget({})]);
  });

  it('is checked in the bundle dialect: unknown fields, types, enums, required', () => {
    expect(problems(schemas.check(gadget({ size: 1, mode: 'Safe' })))).toEqual([]);
    expect(problems(schemas.check(gadget({ size: '1', mode: 'Slow', colour: 'red' })))).toEqual([
      { path: 'spec.size', message: 'Invalid value: "string": must be of type integer' },
      {
        path: 'spec.mode',
        message: 'Unsupported value (a string not in the list): supported values: "Fast", "Safe"',
      },
      { path: 'spec.colour', message: 'unknown field (strict field validation)' },
    ]);
    expect(problems(schemas.check(gadget({})))).toEqual([
      { path: 'spec.size', message: 'Required value' },
    ]);
  });

  it('leaves out what the dialect does not know, with one note each, and checks the rest', () => {
    expect(document.notes).toEqual([
      'keyword maxLength is new, left out (1 place(s), first io.k8s.gadgets.pkg.apis.gadgets.v1.GadgetSpec.name)',
      'keyword x-kubernetes-validations is new, left out (1 place(s), first io.k8s.gadgets.pkg.apis.gadgets.v1.GadgetSpec.name)',
      'no definition io.k8s.gadgets.pkg.apis.gadgets.v1.Missing: any value accepted there',
    ]);
    const spec = { size: 1, name: 'far too long a name', extra: { any: 'thing' } };
    expect(problems(schemas.check(gadget(spec)))).toEqual([]);
  });

  it('does not judge the enums of a status, as the bundle does not', () => {
    expect(problems(schemas.check(gadget({ size: 1 }, { phase: 'Unknown' })))).toEqual([]);
  });
});

describe('a CRD kind of a published document', () => {
  const crdFile = new OfflineSchemas(offline.builtIns, [widgetCrd(WIDGET_SPEC)]);
  let schemas: PublishedSchemas;
  beforeAll(async () => {
    const document = convertPublishedDocument('example.com/v1', publishedCrd(WIDGET_SPEC));
    schemas = await schemasOf([document], [widget({})]);
    await crdFile.prepare([widget({}) as unknown as Kinded]);
  });

  it.each([
    [
      'a valid resource (a property named description kept)',
      { size: 3, port: 'http', description: 'd' },
    ],
    ['an unknown field', { size: 1, colour: 'red' }],
    ['a wrong type', { size: '3' }],
    ['a missing required field', {}],
    ['a bound', { size: 0 }],
    ['a CEL rule', { size: 11 }],
  ])('gives what the CLI gives with the CRD file: %s', (_what, spec) => {
    const expected = crdFile.check(widget(spec));
    expect(schemas.check(widget(spec))).toEqual(expected);
  });

  it("checks the resource's metadata against the document's ObjectMeta", () => {
    expect(problems(schemas.check(widget({ size: 1 }, { name: 'w', labels: { a: 1 } })))).toEqual([
      { path: 'metadata.labels.a', message: 'Invalid value: "integer": must be of type string' },
    ]);
  });

  it('a CRD rendered beside the resource comes first', () => {
    const wider = widgetCrd({
      ...WIDGET_SPEC,
      properties: { ...(WIDGET_SPEC.properties as Json), colour: { type: 'string' } },
    });
    const scoped = schemas.withCrds([validObjects().Deployment, wider]);
    expect(problems(scoped.check(widget({ size: 1, colour: 'red' })))).toEqual([]);
    expect(schemas.withCrds([validObjects().Deployment])).toBe(schemas);
  });
});

describe('what the cluster does not publish', () => {
  const deployment = { ...validObjects().Deployment!, spec: { replicas: 'three' } };

  it('is checked offline: a group-version not served, or none readable at all', async () => {
    for (const documents of [new Map([['apps/v1', undefined]]), new Map()]) {
      const schemas = new PublishedSchemas(() => Promise.resolve(documents), offline);
      await schemas.prepare([deployment as unknown as Kinded]);
      expect(problems(schemas.check(deployment))).toEqual(problems(offline.check(deployment)));
      expect(problems(schemas.check(deployment))).not.toEqual([]);
    }
  });

  it('a kind its group-version document lacks is checked offline', async () => {
    const empty = convertPublishedDocument('apps/v1', { components: { schemas: {} } });
    const schemas = await schemasOf([empty], [deployment]);
    expect(problems(schemas.check(deployment))).toEqual(problems(offline.check(deployment)));
  });

  it('a kind known nowhere is skipped with one note', async () => {
    const thing = { apiVersion: 'nothing.example/v1', kind: 'Thing', metadata: { name: 't' } };
    const schemas = await schemasOf([], [thing]);
    expect(schemas.check(thing)).toEqual({
      checked: false,
      note: 'no schema for nothing.example/v1 Thing, skipped',
    });
  });

  it('asks for the group-versions of the objects prepared, each once', async () => {
    const asked: string[][] = [];
    const schemas = new PublishedSchemas((apiVersions) => {
      asked.push([...apiVersions]);
      return Promise.resolve(new Map());
    }, offline);
    const objects = [
      validObjects().Deployment!,
      validObjects().Service!,
      validObjects().ConfigMap!,
    ];
    await schemas.prepare(objects as unknown as Kinded[]);
    expect(asked).toEqual([['apps/v1', 'v1']]);
  });
});

describe('crdDefinitionName', () => {
  it('names a CRD kind as apiextensions-apiserver does, unlike any Go type', () => {
    expect(crdDefinitionName({ group: 'stencil.dev', version: 'v1alpha1', kind: 'Template' })).toBe(
      'dev.stencil.v1alpha1.Template',
    );
    expect(
      crdDefinitionName({ group: 'gateway.networking.k8s.io', version: 'v1', kind: 'Gateway' }),
    ).toBe('io.k8s.networking.gateway.v1.Gateway');
  });
});
