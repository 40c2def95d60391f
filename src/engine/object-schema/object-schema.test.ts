// validateObject and validateCustomResource: what the API server's strict field validation accepts
// passes, what it refuses is a problem naming the object, the field path, what was expected and
// the JSON type found (never the value), and a kind without a schema is skipped with a note.
import { describe, expect, it } from 'vitest';
import { validObjects, widgetCrd } from '../../../test/fixtures/built-in-objects.ts';
import { schemaFileReader } from '../../kubernetes-schema-files.ts';
import { CrdSchemaCompiler, CustomResourceSchemas, validateCustomResource } from './crd-schemas.ts';
import { KubernetesSchemas } from './kubernetes-schemas.ts';
import type { ObjectProblem, ObjectVerdict } from './object-problems.ts';
import { validateObject } from './object-schema.ts';

type Json = Record<string, unknown>;

const schemas = new KubernetesSchemas(schemaFileReader());
const compiler = new CrdSchemaCompiler();

function problemsOf(verdict: ObjectVerdict): ObjectProblem[] {
  if (!verdict.checked) throw new Error(`skipped: ${verdict.note}`);
  return verdict.problems;
}

/** Problems, without the fields every row shares, for compact expectations. */
function found(object: unknown, crds?: CustomResourceSchemas): Partial<ObjectProblem>[] {
  return problemsOf(validateObject(object, schemas, crds)).map(
    ({ path, message, expected, actual }) => ({ path, message, expected, actual }),
  );
}

/** Deletes the field, as an edit's value. */
const REMOVE = Symbol('remove');

/** A valid object of `kind` with each edit (a dotted path, then the value or REMOVE) applied. */
function edited(kind: string, ...edits: [string, unknown][]): Json {
  const object = validObjects()[kind]!;
  for (const [path, value] of edits) {
    const keys = path.split('.');
    const last = keys.pop()!;
    const parent = keys.reduce<Json>((node, key) => node[key] as Json, object);
    if (value === REMOVE) delete parent[last];
    else parent[last] = value;
  }
  return object;
}

describe('valid objects of the common kinds pass', () => {
  it.each(Object.keys(validObjects()))('%s', (kind) => {
    expect(found(validObjects()[kind])).toEqual([]);
  });
});

interface Row {
  name: string;
  object: Json;
  problems: Partial<ObjectProblem>[];
}

const ROWS: Row[] = [
  {
    name: 'a string in spec.replicas (a string parameter placed whole)',
    object: edited('Deployment', ['spec.replicas', 'shop']),
    problems: [
      {
        path: 'spec.replicas',
        message: 'Invalid value: "string": must be of type integer',
        expected: 'integer',
        actual: 'string',
      },
    ],
  },
  {
    name: 'a string containerPort',
    object: edited('Deployment', ['spec.template.spec.containers.0.ports.0.containerPort', 'http']),
    problems: [
      {
        path: 'spec.template.spec.containers[0].ports[0].containerPort',
        message: 'Invalid value: "string": must be of type integer',
        expected: 'integer',
        actual: 'string',
      },
    ],
  },
  {
    name: 'an unknown field in the pod spec',
    object: edited('Deployment', ['spec.template.spec.nonExistentField', true]),
    problems: [
      {
        path: 'spec.template.spec.nonExistentField',
        message: 'unknown field (strict field validation)',
        expected: 'a field the schema declares',
        actual: 'boolean',
      },
    ],
  },
  {
    name: 'an unknown field in metadata (ObjectMeta is typed for built-in kinds)',
    object: edited('ConfigMap', ['metadata.label', { a: 'b' }]),
    problems: [{ path: 'metadata.label', actual: 'object' }],
  },
  {
    name: 'an unknown top-level field (spec on a ConfigMap)',
    object: edited('ConfigMap', ['spec', {}]),
    problems: [{ path: 'spec', message: 'unknown field (strict field validation)' }],
  },
  {
    name: 'a wrong enum: imagePullPolicy Sometimes',
    object: edited('Deployment', ['spec.template.spec.containers.0.imagePullPolicy', 'Sometimes']),
    problems: [
      {
        path: 'spec.template.spec.containers[0].imagePullPolicy',
        message:
          'Unsupported value (a string not in the list): supported values: "Always", "IfNotPresent", "Never"',
        expected: 'one of "Always", "IfNotPresent", "Never"',
        actual: 'string',
      },
    ],
  },
  {
    name: 'a wrong enum: Service type',
    object: edited('Service', ['spec.type', 'Internal']),
    problems: [
      {
        path: 'spec.type',
        expected: 'one of "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
        actual: 'string',
      },
    ],
  },
  {
    name: 'a container without a name',
    object: edited('Deployment', ['spec.template.spec.containers.0.name', REMOVE]),
    problems: [
      {
        path: 'spec.template.spec.containers[0].name',
        message: 'Required value',
        expected: 'a value',
        actual: 'absent',
      },
    ],
  },
  {
    name: 'a missing required field of the kind (Deployment spec.selector)',
    object: edited('Deployment', ['spec.selector', REMOVE]),
    problems: [{ path: 'spec.selector', message: 'Required value' }],
  },
  {
    name: 'an int-or-string that is neither (targetPort true)',
    object: edited('Service', ['spec.ports.0.targetPort', true]),
    problems: [
      {
        path: 'spec.ports[0].targetPort',
        message: 'Invalid value: "boolean": must be of type integer or string',
        expected: 'integer or string',
        actual: 'boolean',
      },
    ],
  },
  {
    name: 'an int-or-string with a fraction (the server decodes an int32)',
    object: edited('PodDisruptionBudget', ['spec.maxUnavailable', 1.5]),
    problems: [{ path: 'spec.maxUnavailable', expected: 'integer or string', actual: 'number' }],
  },
  {
    name: 'an int-or-string beyond int32',
    object: edited('Service', ['spec.ports.0.targetPort', 2 ** 31]),
    problems: [
      {
        path: 'spec.ports[0].targetPort',
        message: 'Invalid value: "integer": must be a whole number that fits in 32 bits',
      },
    ],
  },
  {
    name: 'an int32 beyond its range',
    object: edited('Deployment', ['spec.replicas', 2 ** 31]),
    problems: [{ path: 'spec.replicas', expected: 'a whole number that fits in 32 bits' }],
  },
  {
    name: 'a quantity that does not parse (1gi)',
    object: edited('Deployment', [
      'spec.template.spec.containers.0.resources.limits.memory',
      '1gi',
    ]),
    problems: [
      {
        path: 'spec.template.spec.containers[0].resources.limits.memory',
        message: 'Invalid value: "string": must be a quantity such as 500m, 1.5, 2Gi or 1e3',
        actual: 'string',
      },
    ],
  },
  {
    name: 'a quantity that is a boolean',
    object: edited('Deployment', ['spec.template.spec.containers.0.resources.requests.cpu', true]),
    problems: [
      {
        path: 'spec.template.spec.containers[0].resources.requests.cpu',
        message: 'Invalid value: "boolean": must be of type a quantity (string or number)',
        expected: 'a quantity (string or number)',
        actual: 'boolean',
      },
    ],
  },
  {
    name: 'Secret data that is not base64',
    object: edited('Secret', ['data.password', 's3cret!']),
    problems: [{ path: 'data.password', expected: 'base64 (standard alphabet, padded)' }],
  },
  {
    name: 'a label value that is a number',
    object: edited('ConfigMap', ['metadata.labels.tier', 1]),
    problems: [{ path: 'metadata.labels.tier', expected: 'string', actual: 'integer' }],
  },
  {
    name: 'two containers with the same name (list-map keys, as server-side apply refuses)',
    object: edited('Deployment', ['spec.template.spec.containers.1', { name: 'app', image: 'x' }]),
    problems: [
      {
        path: 'spec.template.spec.containers[1]',
        message: 'Duplicate value: an earlier item has the same name',
      },
    ],
  },
  {
    name: 'a list where an object is expected, and a number in a string list',
    object: edited('Role', ['rules.0.verbs', ['get', 7]], ['rules.1', ['apps']]),
    problems: [
      { path: 'rules[0].verbs[1]', expected: 'string', actual: 'integer' },
      { path: 'rules[1]', expected: 'object', actual: 'array' },
    ],
  },
  {
    name: 'an unknown field whose value is null (the strict decoder still reports it)',
    object: edited('Deployment', ['spec.template.spec.nonExistentField', null]),
    problems: [{ path: 'spec.template.spec.nonExistentField', actual: 'null' }],
  },
  {
    name: 'a required field that is null (Go decodes "", then validation wants a name)',
    object: edited('Deployment', ['spec.template.spec.containers.0.name', null]),
    problems: [{ path: 'spec.template.spec.containers[0].name', message: 'Required value' }],
  },
  {
    name: 'a null list item where an object is expected (an empty one, without its name)',
    object: edited('Role', ['rules.0', null]),
    problems: [{ path: 'rules[0].verbs', message: 'Required value' }],
  },
  {
    // Server-side apply: "associative list with keys may not have a null element".
    name: 'a null item of a keyed list, even one whose items need no field',
    object: edited('ServiceAccount', ['secrets', [null]]),
    problems: [
      {
        path: 'secrets[0]',
        message: 'Invalid value: "null": must be of type object',
        expected: 'object',
        actual: 'null',
      },
    ],
  },
  {
    // Server-side apply: "associative list without keys has an element that's an explicit null".
    name: 'a null finalizer (an item of a set)',
    object: edited('ConfigMap', ['metadata.finalizers', [null]]),
    problems: [
      {
        path: 'metadata.finalizers[0]',
        message: 'Invalid value: "null": must be of type string',
        expected: 'string',
        actual: 'null',
      },
    ],
  },
  {
    // Server-side apply: "duplicate entries for key [="example.com/keep"]".
    name: 'a finalizer twice (metadata.finalizers is a set)',
    object: edited('ConfigMap', [
      'metadata.finalizers',
      ['example.com/keep', 'example.com/other', 'example.com/keep'],
    ]),
    problems: [
      {
        path: 'metadata.finalizers[2]',
        message: 'Duplicate value: the same as item 0 (a set)',
        expected: 'distinct items',
        actual: 'string',
      },
    ],
  },
  {
    name: 'a verb twice in a set of a FlowSchema rule',
    object: {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 'f' },
      spec: {
        priorityLevelConfiguration: { name: 'workload-low' },
        rules: [
          {
            subjects: [{ kind: 'Group', group: { name: 'system:authenticated' } }],
            nonResourceRules: [{ verbs: ['get', 'get'], nonResourceURLs: ['/healthz'] }],
          },
        ],
      },
    },
    problems: [{ path: 'spec.rules[0].nonResourceRules[0].verbs[1]', actual: 'string' }],
  },
  {
    name: 'a null container (containers are keyed by name)',
    object: edited('Deployment', ['spec.template.spec.containers.0', null]),
    problems: [{ path: 'spec.template.spec.containers[0]', expected: 'object', actual: 'null' }],
  },
  {
    name: 'an RFC 3339 date-time in lower case (Go refuses it)',
    object: edited('ConfigMap', ['metadata.creationTimestamp', '2026-01-02t03:04:05z']),
    problems: [{ path: 'metadata.creationTimestamp', actual: 'string' }],
  },
];

describe('what the API server refuses is a problem at its path', () => {
  it.each(ROWS)('$name', ({ object, problems }) => {
    const actual = found(object);
    expect(actual).toHaveLength(problems.length);
    problems.forEach((problem, i) => expect(actual[i]).toMatchObject(problem));
  });

  it('names the object and the condition reason in every problem', () => {
    const verdict = validateObject(ROWS[0]!.object, schemas);
    expect(problemsOf(verdict)).toEqual([
      expect.objectContaining({ object: 'Deployment team-a/web', reason: 'RenderFailed' }),
    ]);
    const clusterScoped = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' }, x: 1 };
    expect(problemsOf(validateObject(clusterScoped, schemas))[0]?.object).toBe('Namespace a');
  });

  it('reports every problem of one object, not only the first', () => {
    const object = edited(
      'Deployment',
      ['spec.replicas', 'shop'],
      ['spec.template.spec.containers.0.ports.0.containerPort', 'http'],
      ['spec.template.spec.nonExistentField', true],
    );
    expect(found(object).map((p) => p.path)).toEqual([
      'spec.replicas',
      'spec.template.spec.containers[0].ports[0].containerPort',
      'spec.template.spec.nonExistentField',
    ]);
  });

  it('never puts the value in a message, whatever the keyword', () => {
    const secret = 'hunter2-S3CRET';
    const object = edited(
      'Deployment',
      ['spec.replicas', secret],
      ['spec.template.spec.containers.0.imagePullPolicy', secret],
      ['spec.template.spec.containers.0.resources.limits.memory', secret],
      ['spec.template.spec.containers.1', { name: 'app', image: secret }],
      ['metadata.creationTimestamp', secret],
    );
    const problems = problemsOf(validateObject(object, schemas));
    expect(problems).toHaveLength(5);
    expect(JSON.stringify(problems)).not.toContain(secret);
  });
});

describe('what the API server accepts, whatever its type looks like', () => {
  const ACCEPTED: [string, Json][] = [
    ['an int-or-string given as a number', edited('Service', ['spec.ports.0.targetPort', 8080])],
    [
      'distinct finalizers (a set)',
      edited('ConfigMap', ['metadata.finalizers', ['example.com/keep', 'example.com/other']]),
    ],
    [
      'the same argument twice (an atomic list)',
      edited('Deployment', ['spec.template.spec.containers.0.args', ['-v', '-v']]),
    ],
    [
      'a MicroTime with a comma before its six decimals',
      edited('Lease', ['spec.renewTime', '2026-01-02T15:04:20,123456Z']),
    ],
    [
      'an int-or-string given as a string',
      edited('PodDisruptionBudget', ['spec.maxUnavailable', '10%']),
    ],
    [
      'a quantity given as a number',
      edited('Deployment', ['spec.template.spec.containers.0.resources.requests.cpu', 0.5]),
    ],
    [
      'a quantity with an exponent',
      edited('Deployment', ['spec.template.spec.containers.0.resources.requests.memory', '1e9']),
    ],
    [
      'a quantity with spaces around it',
      edited('Deployment', ['spec.template.spec.containers.0.resources.requests.memory', ' 1Gi ']),
    ],
    [
      'null where a field is optional (Go leaves it unset)',
      edited('Deployment', ['spec.replicas', null]),
    ],
    [
      'metadata.creationTimestamp: null, as kubectl prints it',
      edited('Deployment', ['metadata.creationTimestamp', null]),
    ],
    [
      'an empty string in an enum field (the zero value, defaulted)',
      edited('Deployment', ['spec.template.spec.containers.0.imagePullPolicy', '']),
    ],
    [
      'a date-time with a fraction and an offset',
      edited('ConfigMap', ['metadata.creationTimestamp', '2026-01-02T03:04:05.5+01:00']),
    ],
    [
      'a null item in a list of strings (Go decodes it as "")',
      edited('Deployment', ['spec.template.spec.containers.0.args', ['--a', null]]),
    ],
    ['base64 wrapped over lines', edited('Secret', ['data.password', 'czNj\ncmV0'])],
    ['an empty Secret value', edited('Secret', ['data.password', ''])],
    [
      'any JSON inside a RawExtension (preserve-unknown-fields)',
      {
        apiVersion: 'apps/v1',
        kind: 'ControllerRevision',
        metadata: { name: 'r' },
        revision: 1,
        data: { anything: [1, { goes: true }], here: null },
      },
    ],
  ];
  it.each(ACCEPTED)('%s', (_name, object) => {
    expect(found(object)).toEqual([]);
  });
});

describe('a kind without a schema', () => {
  it.each([
    [
      { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } },
      'no schema for example.com/v1 Widget, skipped',
    ],
    [
      { apiVersion: 'apps/v1', kind: 'Nonsense', metadata: { name: 'w' } },
      'no schema for apps/v1 Nonsense, skipped',
    ],
    [{ apiVersion: 'apps/v2', kind: 'Deployment' }, 'no schema for apps/v2 Deployment, skipped'],
    [{ kind: 'Deployment' }, 'an object without apiVersion and kind: no schema, skipped'],
    [{ apiVersion: 'v1', kind: 'toString' }, 'no schema for v1 toString, skipped'],
  ])('%j is skipped with one note', (object, note) => {
    expect(validateObject(object, schemas)).toEqual({ checked: false, note });
  });
});

const WIDGET_CRD = widgetCrd({
  type: 'object',
  required: ['size'],
  'x-kubernetes-validations': [
    {
      rule: 'self.size <= 10',
      message: 'size is at most 10',
      messageExpression: "'size ' + string(self.size)",
    },
  ],
  properties: {
    size: { type: 'integer', format: 'int32', minimum: 1 },
    mode: { type: 'string', enum: ['fast', 'safe'] },
    port: { 'x-kubernetes-int-or-string': true },
    note: { type: 'string', nullable: true, maxLength: 8 },
    config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    template: {
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      'x-kubernetes-preserve-unknown-fields': true,
    },
    tags: {
      type: 'array',
      items: { type: 'string' },
      'x-kubernetes-list-type': 'set',
    },
    ratio: { type: 'number', maximum: 1, exclusiveMaximum: true },
  },
});

const widget = (spec: Json, metadata: Json = { name: 'w', namespace: 'team-a' }): Json => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata,
  spec,
});

describe('custom resources against a CRD given at run time', () => {
  const crds = new CustomResourceSchemas(schemas, compiler).addAll([
    validObjects().Deployment,
    WIDGET_CRD,
  ]);

  it('the CRD itself is a valid built-in object', () => {
    expect(found(WIDGET_CRD)).toEqual([]);
  });

  it('accepts a valid resource, int-or-string both ways, null where nullable, anything under preserve', () => {
    const spec = {
      size: 3,
      mode: 'safe',
      port: 'http',
      note: null,
      config: { any: { thing: [1, 'two'] } },
      template: { apiVersion: 'v1', kind: 'Pod', spec: { whatever: true } },
      tags: ['a', 'b'],
      ratio: 0.5,
    };
    expect(found(widget(spec), crds)).toEqual([]);
    expect(found(widget({ size: 3, port: 8080 }), crds)).toEqual([]);
  });

  it.each([
    [
      'an unknown field',
      { size: 1, colour: 'red' },
      'spec.colour',
      'unknown field (strict field validation)',
    ],
    [
      'a wrong type',
      { size: '3' },
      'spec.size',
      'Invalid value: "string": must be of type integer',
    ],
    ['a missing required field', {}, 'spec.size', 'Required value'],
    [
      'a wrong enum',
      { size: 1, mode: 'slow' },
      'spec.mode',
      'Unsupported value (a string not in the list): supported values: "fast", "safe"',
    ],
    [
      'a bound (OpenAPI exclusiveMaximum: true)',
      { size: 1, ratio: 1 },
      'spec.ratio',
      'Invalid value: "integer": must be < 1',
    ],
    [
      'a CEL rule, with its static message only',
      { size: 11 },
      'spec',
      'Invalid value: "object": size is at most 10',
    ],
    [
      'a duplicate in a set',
      { size: 1, tags: ['a', 'a'] },
      'spec.tags[1]',
      'Duplicate value: the same as item 0 (a set)',
    ],
    [
      'an embedded resource without kind',
      { size: 1, template: { apiVersion: 'v1' } },
      'spec.template.kind',
      'Required value',
    ],
    [
      'int-or-string neither',
      { size: 1, port: [80] },
      'spec.port',
      'Invalid value: "array": must be of type integer or string',
    ],
  ])('refuses %s', (_name, spec, path, message) => {
    expect(found(widget(spec), crds)).toEqual([expect.objectContaining({ path, message })]);
  });

  it('runs no CEL rule after a wrong type, as the server does, and says so', () => {
    const verdict = validateObject(widget({ size: 'eleven', note: 'far too long' }), schemas, crds);
    expect(verdict).toMatchObject({
      checked: true,
      problems: [{ path: 'spec.size' }, { path: 'spec.note' }],
      notes: [
        'example.com/v1 Widget: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      ],
    });
  });

  it('checks metadata as the built-in ObjectMeta, and apiVersion and kind as strings', () => {
    const object = widget({ size: 1 }, { name: 'w', labels: { a: 1 }, colour: 'red' });
    expect(found(object, crds).map((p) => p.path)).toEqual([
      'metadata.labels.a',
      'metadata.colour',
    ]);
  });

  it('prunes nulls as the server does, so an optional null passes', () => {
    expect(found(widget({ size: 1, mode: null }), crds)).toEqual([]);
  });

  it('applies structural defaults before it validates, as the server does (issue #43)', () => {
    // As Gateway API's HTTPRoute: a backendRef's kind is defaulted to Service, and a rule reads it.
    const backendRef = {
      type: 'object',
      required: ['name', 'kind'],
      properties: {
        name: { type: 'string' },
        kind: { type: 'string', default: 'Service' },
        port: { type: 'integer' },
      },
      'x-kubernetes-validations': [
        {
          rule: "(size(self.kind) == 0 || self.kind == 'Service') ? has(self.port) : true",
          message: 'Must have port for Service reference',
        },
      ],
    };
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          required: ['mode'],
          properties: {
            mode: { type: 'string', default: 'fast' },
            backendRefs: { type: 'array', items: backendRef },
            labels: { type: 'object', additionalProperties: { type: 'string', default: 'x' } },
          },
          'x-kubernetes-validations': [{ rule: "self.mode == 'fast'", message: 'mode' }],
        },
      },
    };
    const check = (spec: Record<string, unknown>): string[] => {
      const verdict = validateCustomResource(widget(spec), schema, schemas, compiler);
      return verdict.checked ? verdict.problems.map((p) => `${p.path}: ${p.message}`) : ['skipped'];
    };
    // Required, but defaulted; a null map value takes the default too.
    expect(check({ backendRefs: [{ name: 'web', port: 80 }], labels: { a: null } })).toEqual([]);
    // The defaulted kind reaches the rule: no port is refused, as the server refuses it.
    expect(check({ backendRefs: [{ name: 'web' }] })).toEqual([
      expect.stringContaining('Must have port for Service reference'),
    ]);
    // A value given is kept, and judged.
    expect(check({ mode: 'slow' })).toEqual([expect.stringContaining('mode')]);
  });

  it('notes the CEL rules offline CEL cannot compile and checks the rest', () => {
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          'x-kubernetes-validations': [
            { rule: 'isURL(self.url)' },
            { rule: 'has(self.url)', message: 'url is required' },
          ],
          properties: { url: { type: 'string', format: 'uri' } },
        },
      },
    };
    const verdict = validateCustomResource(widget({}), schema, schemas, compiler);
    expect(verdict).toEqual({
      checked: true,
      problems: [
        expect.objectContaining({
          path: 'spec',
          message: 'Invalid value: "object": url is required',
        }),
      ],
      notes: [
        'example.com/v1 Widget: the CEL rule "isURL(self.url)" uses what offline CEL lacks, not checked',
      ],
    });
  });

  it('skips with the reason a schema ajv cannot compile', () => {
    const verdict = validateCustomResource(
      widget({}),
      { type: 'object', properties: { spec: { type: 'string', pattern: '(?<' } } },
      schemas,
      compiler,
    );
    expect(verdict.checked).toBe(false);
    if (!verdict.checked)
      expect(verdict.note).toMatch(
        /^the schema of example.com\/v1 Widget cannot be checked offline/,
      );
  });

  describe('a pattern is RE2, matched in linear time (crd-schema/re2.ts)', () => {
    const withPattern = (pattern: string): Json => ({
      type: 'object',
      properties: { spec: { type: 'object', properties: { name: { type: 'string', pattern } } } },
    });
    const check = (pattern: string, name: string): ObjectVerdict =>
      validateCustomResource(widget({ name }), withPattern(pattern), schemas, compiler);

    // Correctness only: vitest's timeout is the bound (JavaScript's RegExp takes minutes on it).
    it('checks a hostile pattern against a hostile value (a CRD a Template renders)', () => {
      const name = `${'a'.repeat(40)}!`;
      expect(problemsOf(check('(a+)+$', name))).toEqual([
        expect.objectContaining({ path: 'spec.name', expected: 'a string matching (a+)+$' }),
      ]);
      expect(problemsOf(check('(a+)+!$', name))).toEqual([]);
    });

    it("reads the pattern as RE2 does: . takes \\r, which JavaScript's does not", () => {
      expect(problemsOf(check('^a.b$', 'a\rb'))).toEqual([]);
    });

    it('skips, naming why, a schema whose pattern is not RE2 (as the API server refuses it)', () => {
      expect(check('^(?!admin)', 'root')).toEqual({
        checked: false,
        note:
          'the schema of example.com/v1 Widget cannot be checked offline (the pattern ^(?!admin) ' +
          'is not valid RE2: invalid or unsupported Perl syntax: `(?!`), skipped',
      });
    });

    it('skips an object with a value too long to check against its pattern in bounded time', () => {
      expect(check('[a-z]{1000}$', 'a'.repeat(100_000))).toEqual({
        checked: false,
        note:
          'Widget team-a/w cannot be checked offline (a value of 100000 characters is too long to ' +
          'check against the pattern [a-z]{1000}$ (more than 20000000 steps)), skipped',
      });
    });
  });

  it("checks Stencil's own kinds against config/crd", () => {
    const instance = {
      apiVersion: 'stencil.dev/v1alpha1',
      kind: 'TemplateInstance',
      metadata: { name: 'i' },
      spec: { templateRef: { name: 't' }, extra: 1 },
    };
    expect(found(instance, crds).map((p) => p.path)).toEqual(['spec.extra']);
    expect(validateObject(instance, schemas)).toEqual({
      checked: false,
      note: 'no schema for stencil.dev/v1alpha1 TemplateInstance, skipped',
    });
  });
});

describe('lazy loading', () => {
  it('reads nothing until an object is checked, then only the files its kind needs', () => {
    const read: string[] = [];
    const lazy = new KubernetesSchemas((file) => {
      read.push(file);
      return schemaFileReader()(file);
    });
    expect(read).toEqual([]);
    validateObject(validObjects().ConfigMap, lazy);
    expect(read).toEqual([
      'index.json',
      'io.k8s.api.core.v1.json',
      'io.k8s.apimachinery.pkg.api.resource.json',
      'io.k8s.apimachinery.pkg.apis.meta.v1.json',
      'io.k8s.apimachinery.pkg.runtime.json',
      'io.k8s.apimachinery.pkg.util.intstr.json',
    ]);
    validateObject(validObjects().Role, lazy);
    expect(read.slice(6)).toEqual(['io.k8s.api.rbac.v1.json']);
    expect(lazy.kubernetesVersion).toBe('v1.36.3');
    expect(lazy.stabilityOf('resource.k8s.io/v1beta2')).toBe('beta');
  });
});
