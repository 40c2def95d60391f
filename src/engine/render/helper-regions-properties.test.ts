// Property-based hostile input for the helpers that emit YAML syntax (quote, squote, toJson,
// toYaml, and indent/nindent of their output) placed INSIDE other text: in the middle of a
// plain or quoted scalar, in a block scalar, a comment, a key, a flow collection. Whatever the
// value, it must never change the structure around it (ADR 0011): the render either keeps every
// key and scalar the template wrote, or fails with a typed problem naming the helper.
import { fc, it as prop } from '@fast-check/vitest';
import Handlebars from 'handlebars';
import { describe, expect } from 'vitest';
import { hostileString } from '../../../test/support/hostile-values.ts';
import { caseCounter, runs } from '../../../test/support/property-runs.ts';
import type { JsonValue } from '../../api/object-meta.ts';
import { registerHelpers } from './helpers.ts';
import type { Outcome } from '../shared/problem.ts';
import {
  compileTemplate,
  renderTemplate,
  type RenderContext,
  type RenderedDocument,
} from './render.ts';

const tried = caseCounter('helper regions');

function context(parameters: Record<string, JsonValue>): RenderContext {
  return {
    parameters,
    instance: { name: 'shop', namespace: 'team-a', uid: 'u-1', labels: {}, annotations: {} },
    template: { name: 'web-app', namespace: 'platform', generation: 1 },
  };
}

function render(body: string, x: JsonValue): Outcome<RenderedDocument[]> {
  const compiled = compileTemplate(body, ['x']);
  return compiled.ok ? renderTemplate(compiled.value, context({ x })) : compiled;
}

/** The text a helper call writes, from the helpers alone (no renderer, no YAML). */
const bare = Handlebars.create();
registerHelpers(bare);
function helperText(call: string, x: JsonValue): string {
  return bare.compile(`{{${call}}}`, { noEscape: true })({ parameters: { x } });
}

/** Every helper whose output is YAML syntax inserted as text, by its outermost name. */
const CALLS = [
  { name: 'quote', call: 'quote parameters.x', scalarOnly: true },
  { name: 'squote', call: 'squote parameters.x', scalarOnly: true },
  { name: 'toJson', call: 'toJson parameters.x', scalarOnly: false },
  { name: 'toYaml', call: 'toYaml parameters.x', scalarOnly: false },
  { name: 'indent', call: 'indent 0 (toJson parameters.x)', scalarOnly: false },
  { name: 'indent', call: 'indent 2 (toYaml parameters.x)', scalarOnly: false },
  { name: 'nindent', call: 'nindent 4 (quote parameters.x)', scalarOnly: true },
] as const;
type Call = (typeof CALLS)[number];

const header = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  fixed: x\n';

interface Placement {
  name: string;
  line: (mustache: string) => string;
  /** What must hold of `data` when the render succeeds; `t` is the helper's text. */
  check: (data: Record<string, unknown>, t: string) => void;
}

const oneLine = (t: string): boolean => !/[\n\r\u0085\u2028\u2029]/.test(t);
const keysOf = (data: Record<string, unknown>): string[] => Object.keys(data).sort();

/** Placements of a helper inside text the template wrote around it. */
const PLACEMENTS: Placement[] = [
  {
    name: 'mid plain scalar',
    line: (m) => `  k: pre-${m}-post`,
    check: (data, t) => {
      expect(keysOf(data)).toEqual(['fixed', 'k']);
      expect(typeof data.k).toBe('string');
      if (oneLine(t)) expect(data.k).toBe(`pre-${t}-post`);
    },
  },
  {
    name: 'end of a plain scalar',
    line: (m) => `  k: a ${m}`,
    check: (data, t) => {
      expect(keysOf(data)).toEqual(['fixed', 'k']);
      if (oneLine(t)) expect(data.k).toBe(`a ${t}`);
    },
  },
  {
    name: 'start of a plain scalar',
    line: (m) => `  k: ${m} z`,
    check: (data, t) => {
      expect(keysOf(data)).toEqual(['fixed', 'k']);
      if (oneLine(t)) expect(data.k).toBe(`${t.trimStart()} z`);
    },
  },
  {
    name: 'double-quoted scalar',
    line: (m) => `  k: "pre ${m} post"`,
    check: (data) => {
      expect(keysOf(data)).toEqual(['fixed', 'k']);
      expect(data.k).toMatch(/^pre [^]* post$/);
    },
  },
  {
    name: 'single-quoted scalar',
    line: (m) => `  k: 'pre ${m} post'`,
    check: (data) => {
      expect(keysOf(data)).toEqual(['fixed', 'k']);
      expect(data.k).toMatch(/^pre [^]* post$/);
    },
  },
  {
    name: 'block scalar line',
    line: (m) => `  k: |\n    line ${m}\n    end\n  after: 1`,
    check: (data, t) => {
      expect(keysOf(data)).toEqual(['after', 'fixed', 'k']);
      expect(data.after).toBe(1);
      if (oneLine(t)) expect(data.k).toBe(`line ${t}\nend\n`);
    },
  },
  {
    name: 'comment',
    line: (m) => `  k: v # ${m}\n  after: 1`,
    check: (data) => {
      expect(data).toEqual({ fixed: 'x', k: 'v', after: 1 });
    },
  },
  {
    name: 'key',
    line: (m) => `  pre-${m}: v`,
    check: (data, t) => {
      const keys = keysOf(data).filter((k) => k !== 'fixed');
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatch(/^pre-/);
      expect(data[keys[0]!]).toBe('v');
      if (oneLine(t)) expect(keys[0]).toBe(`pre-${t}`);
    },
  },
  {
    name: 'flow sequence item',
    line: (m) => `  k: [a, pre${m}, z]`,
    check: (data, t) => {
      expect(keysOf(data)).toEqual(['fixed', 'k']);
      const list = data.k as unknown[];
      expect(list).toHaveLength(3);
      expect([list[0], list[2]]).toEqual(['a', 'z']);
      if (oneLine(t)) expect(list[1]).toBe(`pre${t}`);
    },
  },
  {
    name: 'block list item',
    line: (m) => `  k:\n    - pre-${m}\n    - z`,
    check: (data, t) => {
      expect(keysOf(data)).toEqual(['fixed', 'k']);
      const list = data.k as unknown[];
      expect(list).toHaveLength(2);
      expect(list[1]).toBe('z');
      if (oneLine(t)) expect(list[0]).toBe(`pre-${t}`);
    },
  },
  {
    name: 'double-quoted key',
    line: (m) => `  "pre ${m}": v\n  after: 1`,
    check: (data) => {
      const keys = keysOf(data).filter((k) => k !== 'fixed' && k !== 'after');
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatch(/^pre /);
      expect([data[keys[0]!], data.after]).toEqual(['v', 1]);
    },
  },
  {
    name: 'second line of a multi-line plain scalar',
    line: (m) => `  k: first\n    pre ${m} post\n  after: 1`,
    check: (data) => {
      expect(keysOf(data)).toEqual(['after', 'fixed', 'k']);
      expect(data.after).toBe(1);
      expect(data.k).toMatch(/^first pre [^]* post$/);
    },
  },
  {
    name: 'nested flow collections',
    line: (m) => `  k: [[a, pre${m}], {b: x${m} }, z]`,
    check: (data) => {
      expect(keysOf(data)).toEqual(['fixed', 'k']);
      const list = data.k as unknown[];
      expect(list).toHaveLength(3);
      expect((list[0] as unknown[]).length).toBe(2);
      expect(Object.keys(list[1] as object)).toEqual(['b']);
      expect(list[2]).toBe('z');
    },
  },
  {
    name: 'flow mapping value',
    line: (m) => `  k: {a: pre${m}, z: 1}`,
    check: (data) => {
      expect(keysOf(data)).toEqual(['fixed', 'k']);
      const map = data.k as Record<string, unknown>;
      expect(Object.keys(map).sort()).toEqual(['a', 'z']);
      expect(map.z).toBe(1);
    },
  },
];

const protoKey = fc.constantFrom('__proto__', 'constructor', 'toString', 'fixed', 'k');
const anyValue: fc.Arbitrary<JsonValue> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonValue> },
  {
    weight: 1,
    arbitrary: fc.dictionary(fc.oneof(protoKey, hostileString), hostileString, { maxKeys: 3 }),
  },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 3 }) },
);

const isScalar = (v: JsonValue): v is string | number | boolean | null =>
  v === null || typeof v !== 'object';

/** A refusal must be typed and say which helper and where. */
function expectNamedRefusal(result: Outcome<RenderedDocument[]>, call: Call): void {
  expect(result.ok).toBe(false);
  if (result.ok) return;
  const problem = result.problems[0]!;
  expect(problem.reason).toBe('TemplateExecutionFailed');
  expect(problem.path).toBe('spec.handlebars');
  if (/reserved characters/.test(problem.message)) return;
  expect(problem.message).toContain(call.name);
  expect(problem.message).toMatch(/line \d+, column \d+/);
}

describe('property: a helper that emits YAML, placed inside other text, never changes the structure', () => {
  prop.prop([fc.constantFrom(...CALLS), fc.constantFrom(...PLACEMENTS), anyValue], runs(1500))(
    'the render keeps every key and scalar the template wrote, or names the helper',
    (call, placement, x) => {
      tried('helper inside text');
      if (call.scalarOnly && !isScalar(x)) return; // quote and squote refuse lists and maps
      const mustache = `{{${call.call}}}`;
      const result = render(`${header}${placement.line(mustache)}\n`, x);
      if (!result.ok) {
        tried('helper inside text ... of which refused');
        expectNamedRefusal(result, call);
        return;
      }
      expect(result.value).toHaveLength(1);
      const object = result.value[0]!.object as Record<string, unknown>;
      expect(Object.keys(object).sort()).toEqual(['apiVersion', 'data', 'kind', 'metadata']);
      expect(object.metadata).toEqual({ name: 'cm' });
      placement.check(object.data as Record<string, unknown>, helperText(call.call, x));
    },
  );

  prop.prop([anyValue], runs(400))(
    'keeps whole-value placements working: the value comes back exactly as given',
    (x) => {
      tried('whole-value placements');
      const lines = [
        // Keys that YAML 1.1 reads as strings (`y` would be the boolean true).
        '  tj: {{toJson parameters.x}}',
        '  ty:{{nindent 4 (toYaml parameters.x)}}',
        '  tl:\n{{indent 4 (toYaml parameters.x)}}',
        '  tf: [{{toJson parameters.x}}, z]',
      ];
      if (isScalar(x)) lines.push('  tq: {{quote parameters.x}}', '  ts: {{squote parameters.x}}');
      const body = `${header}${lines.join('\n')}\n`;
      const result = render(body, x);
      if (!result.ok) {
        // The one refusal a value may cause in a whole-value place: the reserved characters.
        expect(result.problems[0]?.message).toMatch(/reserved characters/);
        return;
      }
      const data = result.value[0]!.object.data as Record<string, unknown>;
      const json: unknown = JSON.parse(JSON.stringify(x)); // JSON has no -0
      expect(data.tj).toEqual(json);
      expect(data.ty).toEqual(x);
      expect(data.tl).toEqual(x);
      expect(data.tf).toEqual([json, 'z']);
      if (isScalar(x)) {
        const text = x === null ? '' : String(x);
        expect([data.tq, data.ts]).toEqual([text, text]);
      }
    },
  );
});
