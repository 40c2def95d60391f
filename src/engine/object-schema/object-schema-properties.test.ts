// Properties of validateObject over the valid objects of test/fixtures/built-in-objects.ts: any JSON
// under x-kubernetes-preserve-unknown-fields keeps an object valid, a field added to an object is
// reported at its own path and nowhere else, and no message ever holds a value.
import { fc, it as prop } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { validObjects, widgetCrd } from '../../../test/fixtures/built-in-objects.ts';
import { caseCounter, expectExercised, runs } from '../../../test/support/property-runs.ts';
import { schemaFileReader } from '../../kubernetes-schema-files.ts';
import { KubernetesSchemas } from './kubernetes-schemas.ts';
import { CrdSchemaCompiler, CustomResourceSchemas } from './crd-schemas.ts';
import type { ObjectVerdict } from './object-problems.ts';
import { validateObject } from './object-schema.ts';

type Json = Record<string, unknown>;
type Path = (string | number)[];

const tried = caseCounter('object-schema');
const schemas = new KubernetesSchemas(schemaFileReader());
const KINDS = Object.keys(validObjects());

const json = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);

interface Places {
  objects: Path[];
  leaves: Path[];
}

/** Every place in `value`: its objects (where a field can be added) and its leaves. */
function places(value: unknown, at: Path = [], out: Places = { objects: [], leaves: [] }): Places {
  if (Array.isArray(value)) value.forEach((item, i) => places(item, [...at, i], out));
  else if (typeof value === 'object' && value !== null) {
    out.objects.push(at);
    for (const [key, child] of Object.entries(value)) places(child, [...at, key], out);
  } else out.leaves.push(at);
  return out;
}

function at(object: unknown, path: Path): Json {
  return path.reduce<unknown>((node, key) => (node as Json)[key as string], object) as Json;
}

function fieldPath(path: Path): string {
  return path.reduce<string>(
    (text, key) => (typeof key === 'number' ? `${text}[${key}]` : text ? `${text}.${key}` : key),
    '',
  );
}

function problems(verdict: ObjectVerdict): { path: string; message: string }[] {
  if (!verdict.checked) throw new Error(verdict.note);
  return verdict.problems;
}

const preservingCrd = widgetCrd({
  type: 'object',
  properties: {
    size: { type: 'integer' },
    config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  },
});
const crds = new CustomResourceSchemas(schemas, new CrdSchemaCompiler()).addAll([preservingCrd]);
const IDENTITY = new Set(['apiVersion', 'kind', 'metadata.name', 'metadata.namespace']);

describe('property: validateObject', () => {
  prop.prop(
    [fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), json, { maxKeys: 5 }), json],
    runs(300),
  )(
    'any JSON under x-kubernetes-preserve-unknown-fields keeps a valid object valid',
    (config, data) => {
      tried('preserve-unknown-fields');
      const widget = {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: 'w' },
        spec: { size: 1, config },
      };
      expect(problems(validateObject(widget, schemas, crds))).toEqual([]);
      const revision = {
        apiVersion: 'apps/v1',
        kind: 'ControllerRevision',
        metadata: { name: 'r' },
        revision: 1,
        data: { data },
      };
      expect(problems(validateObject(revision, schemas))).toEqual([]);
    },
  );

  let unknown = 0;
  let added = 0;
  prop.prop(
    [fc.constantFrom(...KINDS), fc.nat(), fc.stringMatching(/^zz[a-zA-Z0-9]{1,8}$/), json],
    runs(500),
  )(
    'a field added to any object of a valid object is reported at its path, and only there',
    (kind, pick, field, value) => {
      tried('an added field');
      const object = validObjects()[kind]!;
      const { objects } = places(object);
      const where = objects[pick % objects.length]!;
      at(object, where)[field] = value;
      const found = problems(validateObject(object, schemas));
      added++;
      // A struct refuses the field; a map (labels, data, limits) takes it or refuses its type.
      for (const problem of found) expect(problem.path).toBe(fieldPath([...where, field]));
      if (found.some((p) => p.message === 'unknown field (strict field validation)')) unknown++;
    },
  );

  prop.prop(
    [fc.constantFrom(...KINDS), fc.nat(), fc.string({ minLength: 1, maxLength: 12 })],
    runs(500),
  )('no problem ever holds the value that caused it', (kind, pick, text) => {
    tried('no value in messages');
    const secret = `S3CRET-${text}`;
    const object = validObjects()[kind]!;
    // The object's identity is named in every problem and note, by design: not a value.
    const leaves = places(object).leaves.filter((p) => !IDENTITY.has(p.join('.')));
    const where = leaves[pick % leaves.length]!;
    at(object, where.slice(0, -1))[where.at(-1) as string] = secret;
    const verdict = validateObject(object, schemas);
    expect(JSON.stringify(verdict)).not.toContain(secret);
  });

  it('most added fields land in a struct, so the property above is about strictness', () => {
    expectExercised('an added field is an unknown field', unknown, added, 0.5);
  });
});
