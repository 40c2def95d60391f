// Property-based hostile input for render (issue #11): random Templates from a grammar of YAML +
// Handlebars fragments, random values (any JSON, huge, control characters, YAML-significant text,
// prototype keys). Each property prints how many cases it tried; FC_SEED=<seed> replays a run.
import { fc, it as prop } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { parse, stringify } from 'yaml';
import { aSecret, aTemplate, anInstance } from '../../../test/support/builders.ts';
import { caseCounter, runs } from '../../../test/support/property-runs.ts';
import { hostileString } from '../../../test/support/hostile-values.ts';
import { shows } from '../../../test/support/secret-leak-cases.ts';
import type { JsonValue } from '../../api/object-meta.ts';
import { readyCondition } from '../shared/conditions.ts';
import { evaluateInstance } from '../evaluation/instance-evaluation.ts';
import { MemorySource } from '../sources/memory-source.ts';
import type { Outcome } from '../shared/problem.ts';
import {
  compileTemplate,
  MAX_RENDER_STEPS,
  renderTemplate,
  type RenderContext,
  type RenderedDocument,
} from './render.ts';

const tried = caseCounter('render');
const PARAMS = ['p0', 'p1', 'p2'] as const;

function context(parameters: Record<string, JsonValue>): RenderContext {
  return {
    parameters,
    instance: { name: 'shop', namespace: 'team-a', uid: 'u-1', labels: {}, annotations: {} },
    template: { name: 'web-app', namespace: 'platform', generation: 1 },
  };
}

/** Compile + render; the Outcome of whichever failed first. Never catches: a throw fails the test. */
function render(body: string, parameters: Record<string, JsonValue>): Outcome<RenderedDocument[]> {
  const compiled = compileTemplate(body, Object.keys(parameters));
  return compiled.ok ? renderTemplate(compiled.value, context(parameters)) : compiled;
}

// ---- the grammar ---------------------------------------------------------------------------

const param = fc.constantFrom(...PARAMS).map((p) => `@root.parameters.${p}`);

/** An expression over a parameter: the parameter itself or a helper applied to it. */
const expression = fc.oneof(
  param,
  fc
    .tuple(
      fc.constantFrom(
        'upper %',
        'lower %',
        'trim %',
        'default "fallback" %',
        'trunc 7 %',
        'replace "a" "-" %',
        'concat % "-x"',
        'b64enc %',
        'sha256 %',
      ),
      param,
    )
    .map(([helper, p]) => `(${helper.replace('%', p)})`),
);

/** `{{e}}`: a helper call is written without its sub-expression parentheses at the top. */
const mustache = (e: string): string => (e.startsWith('(') ? `{{${e.slice(1, -1)}}}` : `{{${e}}}`);

/** A fragment in scalar position: interpolations, helpers that emit text, inline blocks. */
const scalarFragment = fc.oneof(
  expression.map(mustache),
  expression.map((e) => `"${mustache(e)}"`),
  expression.map((e) => `'${mustache(e)}'`),
  expression.map((e) => `pre-${mustache(e)}-post`),
  expression.map((e) => `{{quote ${e}}}`),
  expression.map((e) => `{{squote ${e}}}`),
  expression.map((e) => `{{toJson ${e}}}`),
  // The helpers that emit YAML syntax, inside other text too (ADR 0011).
  fc
    .tuple(fc.constantFrom('quote', 'squote', 'toJson', 'toYaml'), expression)
    .map(([helper, e]) => `pre-{{${helper} ${e}}}-post`),
  expression.map((e) => `a {{toJson ${e}}}`),
  expression.map((e) => `x # {{toYaml ${e}}}`),
  param.map((p) => `{{len ${p}}}`),
  param.map((p) => `{{#if ${p}}}yes{{else}}no{{/if}}`),
  param.map((p) => `{{#unless ${p}}}empty{{/unless}}`),
);

/** Literal YAML the provider wrote: significant characters, but no value can reach them. */
const literalFragment = fc.constantFrom(
  'plain text',
  '"quoted: text # not a comment"',
  "'it''s'",
  '[1, two, {three: 3}]',
  '{a: 1, b: [x]}',
  '~',
  'null',
  '!!str 5',
  '0x1F',
  '"\\u00e9\\n"',
);

type Node =
  | { t: 'scalar'; text: string }
  | { t: 'map'; children: Node[] }
  | { t: 'if'; p: string; children: Node[] }
  | { t: 'list'; items: string[] };

const node: fc.Arbitrary<Node> = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(scalarFragment, literalFragment).map((text): Node => ({ t: 'scalar', text })),
    fc
      .array(tie('node'), { minLength: 1, maxLength: 4 })
      .map((children): Node => ({ t: 'map', children })),
    fc
      .tuple(param, fc.array(tie('node'), { minLength: 1, maxLength: 3 }))
      .map(([p, children]): Node => ({ t: 'if', p, children })),
    fc
      .array(scalarFragment, { minLength: 1, maxLength: 3 })
      .map((items): Node => ({ t: 'list', items })),
  ),
})).node;

/** Serialises nodes as map entries with unique keys (k0, k1, ...) at `indent`. */
function serialise(nodes: Node[], indent: string, counter: { n: number }): string {
  let out = '';
  for (const n of nodes) {
    if (n.t === 'if') {
      out += `{{#if ${n.p}}}\n${serialise(n.children, indent, counter)}{{/if}}\n`;
      continue;
    }
    const key = `k${counter.n++}`;
    if (n.t === 'scalar') out += `${indent}${key}: ${n.text}\n`;
    else if (n.t === 'map')
      out += `${indent}${key}:\n${serialise(n.children, `${indent}  `, counter)}`;
    else {
      // Each item is repeated per element of a fixed list: values must not change the count.
      out += `${indent}${key}:\n{{#each (split "," "a,b")}}\n`;
      out += n.items.map((item) => `${indent}  - ${item}\n`).join('');
      out += '{{/each}}\n';
    }
  }
  return out;
}

const body = fc
  .array(node, { minLength: 1, maxLength: 5 })
  .map(
    (nodes) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  fixed: x\n${serialise(nodes, '  ', { n: 0 })}`,
  );

// ---- hostile values --------------------------------------------------------------------------

const protoKey = fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'polluted');

/** Any JSON value, with prototype keys in its maps and the occasional huge string. */
const anyValue: fc.Arbitrary<JsonValue> = fc.oneof(
  { weight: 3, arbitrary: hostileString },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<JsonValue> },
  {
    weight: 1,
    arbitrary: fc.dictionary(
      fc.oneof(protoKey, fc.string({ maxLength: 4 })),
      fc.jsonValue({ maxDepth: 2 }),
      {
        maxKeys: 4,
      },
    ) as fc.Arbitrary<JsonValue>,
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 2_500_000 }).map((n) => 'h'.repeat(n)) },
);

const stringParams = fc
  .tuple(hostileString, hostileString, hostileString)
  .map(([p0, p1, p2]): Record<string, JsonValue> => ({ p0, p1, p2 }));
const anyParams = fc
  .tuple(anyValue, anyValue, anyValue)
  .map(([p0, p1, p2]): Record<string, JsonValue> => ({ p0, p1, p2 }));

// ---- checks ----------------------------------------------------------------------------------

/** The structure of a value: keys and list lengths, with every scalar the same. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (value !== null && typeof value === 'object') {
    return Object.keys(value)
      .sort()
      .map((k) => [k, shape((value as Record<string, unknown>)[k])]);
  }
  return 'scalar';
}

/** Every map in the output is a plain object whose prototype was not swapped by a key. */
function plainMaps(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(plainMaps);
  if (value !== null && typeof value === 'object') {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) return false;
    return Object.values(value).every(plainMaps);
  }
  return true;
}

function prototypesIntact(): boolean {
  const probe = {} as Record<string, unknown>;
  return (
    Object.getOwnPropertyNames(Object.prototype).length === PROTO_NAMES &&
    probe.polluted === undefined &&
    Object.getOwnPropertyNames(Array.prototype).length === ARRAY_PROTO_NAMES
  );
}
const PROTO_NAMES = Object.getOwnPropertyNames(Object.prototype).length;
const ARRAY_PROTO_NAMES = Object.getOwnPropertyNames(Array.prototype).length;

/** The values stand-in for `params`: same emptiness (so `if` takes the same branch), no hostility. */
function benign(params: Record<string, JsonValue>): Record<string, JsonValue> {
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, v === '' ? '' : 'benign']));
}

describe('property: render of random templates and hostile values', () => {
  prop.prop([body, anyParams], runs(250))(
    'returns a typed outcome, never throws, emits valid YAML and pollutes no prototype',
    (template, params) => {
      tried('typed outcome, valid YAML, no prototype pollution');
      const result = render(template, params);
      expect(prototypesIntact()).toBe(true);
      if (!result.ok) {
        tried('typed outcome ... of which refused with a typed problem');
        expect(result.problems.length).toBeGreaterThan(0);
        for (const p of result.problems) {
          expect(['TemplateExecutionFailed', 'ValidationFailed']).toContain(p.reason);
          expect(typeof p.message).toBe('string');
        }
        return;
      }
      for (const doc of result.value) {
        const object = doc.object as {
          apiVersion?: unknown;
          kind?: unknown;
          metadata?: { name?: unknown };
        };
        expect(typeof object.apiVersion).toBe('string');
        expect(typeof object.kind).toBe('string');
        expect(typeof object.metadata?.name).toBe('string');
        expect(plainMaps(doc.object)).toBe(true);
        // What is emitted is a YAML document that reads back as the same object.
        expect(parse(stringify(doc.object))).toEqual(doc.object);
      }
    },
    60_000, // huge values through sha256/b64enc on a shared CPU
  );

  prop.prop([body, stringParams], runs(400))(
    'never lets a value change the structure of the output',
    (template, params) => {
      tried('values never change structure');
      const reference = render(template, benign(params));
      const hostile = render(template, params);
      if (!reference.ok) return; // the template itself is broken: nothing to compare
      tried('values never change structure ... of which the template rendered');
      if (!hostile.ok) {
        // The refusals a value may cause here: it carries the reserved marker characters, or a
        // helper's YAML placed inside text would have changed the structure (ADR 0011).
        expect(hostile.problems[0]?.message).toMatch(
          /reserved characters|the output of (quote|squote|toJson|toYaml) \(template line \d+, column \d+\)/,
        );
        return;
      }
      expect(hostile.value.map((d) => shape(d.object))).toEqual(
        reference.value.map((d) => shape(d.object)),
      );
    },
    30_000,
  );

  prop.prop([hostileString], runs(300))(
    'puts a whole-scalar value into the output exactly as given',
    (value) => {
      tried('whole-scalar value kept verbatim');
      const result = render(
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: {{parameters.p0}}\n  b: "{{parameters.p0}}"\n',
        { p0: value },
      );
      if (!result.ok) {
        expect(result.problems[0]?.message).toMatch(/reserved characters/);
        return;
      }
      expect(result.value[0]?.object.data).toEqual({ a: value, b: value });
    },
  );

  prop.prop(
    [
      fc.subarray(
        [
          '{{observed "v1" "ConfigMap" "src" ".data.v"}}',
          '"{{observed "v1" "ConfigMap" "src" ".data.v"}}"',
          'pre-{{upper (observed "v1" "ConfigMap" "src" ".data.v")}}-post',
          '{{concat "x-" (observed "v1" "ConfigMap" "src" ".data.v")}}',
          '{{quote (observed "v1" "ConfigMap" "src" ".data.v")}}',
          '{{toJson (observed "v1" "ConfigMap" "src" ".data.v")}}',
          '{{b64enc (observed "v1" "ConfigMap" "src" ".data.v")}}',
        ],
        { minLength: 1 },
      ),
      hostileString,
    ],
    runs(300),
  )('never lets an observed value change the structure of the output', (fragments, value) => {
    tried('observed values never change structure');
    const template = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: src\ndata:\n  v: x\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: reader\n  annotations: {stencil.dev/wave: "1"}\ndata:\n${fragments.map((f, i) => `  k${i}: ${f}\n`).join('')}`;
    const compiled = compileTemplate(template, []);
    if (!compiled.ok) throw new Error(compiled.problems[0]!.message);
    const withValue = (v: string): ReturnType<typeof renderTemplate> =>
      renderTemplate(compiled.value, context({}), () => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'src' },
        data: { v },
      }));
    const reference = withValue('benign');
    const hostile = withValue(value);
    expect(reference.ok).toBe(true);
    if (!hostile.ok) {
      expect(value).toMatch(/[\uE000-\uE006]/);
      expect(hostile.problems[0]?.message).toMatch(/reserved characters/);
      return;
    }
    expect(hostile.value.map((d) => shape(d.object))).toEqual(
      reference.ok ? reference.value.map((d) => shape(d.object)) : [],
    );
    expect(hostile.value[1]?.observed).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'src', jsonPath: '.data.v', state: 'found' },
    ]);
  });

  prop.prop([fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 120 })], runs(60))(
    'stops any loop nest at the step budget with a typed failure',
    (depth, size) => {
      tried('step budget');
      let inner = '{{@index}},';
      for (let d = 0; d < depth; d++) inner = `{{#each @root.parameters.l}}${inner}{{/each}}`;
      const result = render(
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: "${inner}"\n`,
        { l: Array.from({ length: size }, (_, i) => i) },
      );
      const innermost = size ** depth;
      if (innermost > MAX_RENDER_STEPS) {
        expect(result.ok).toBe(false);
        expect(!result.ok && result.problems[0]?.message).toMatch(/steps/);
      } else if (2 * innermost + size ** (depth - 1) * 2 < MAX_RENDER_STEPS / 2) {
        expect(result.ok).toBe(true);
      }
    },
  );
});

describe('property: a Secret never shows outside the rendered resources', () => {
  const secretText = fc.string({ minLength: 4, maxLength: 30, unit: 'grapheme' });

  prop.prop([body, secretText, hostileString], runs(300))(
    'for random templates over a Secret-backed parameter',
    async (template, secret, other) => {
      tried('no Secret outside the rendered resources');
      const evaluation = await evaluateInstance({
        template: aTemplate(
          [{ name: 'p0', type: 'string' }, { name: 'p1' }, { name: 'p2', exposeInStatus: true }],
          { handlebars: template, allowCrossNamespaceResources: false },
        ),
        instance: anInstance([
          { name: 'p0', valueFrom: { secretKeyRef: { name: 's', key: 'pw' } } },
          { name: 'p1', value: other },
          { name: 'p2', value: 'shown' },
        ]),
        namespaceLabels: {},
        port: new MemorySource([aSecret('s', 'team-a', { pw: secret })]),
      });
      const conditions = [...evaluation.conditions, readyCondition(evaluation.conditions)];
      const visible = [
        ...conditions.flatMap((c) => [c.reason, c.message]),
        ...(evaluation.resolved?.status ?? []).map((entry) => JSON.stringify(entry.value ?? '')),
      ];
      for (const text of visible) expect(shows(text, secret)).toBe(false);
    },
    30_000,
  );
});
