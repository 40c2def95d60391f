// Property of issue #22: random chains of up to four helpers, from the whole helper list, applied
// to a Secret-backed value and placed where the render fails (or where the API server would
// refuse it). Nothing a user sees (conditions, the messages the operator derives, the strings
// `stencil diff` prints) contains the value, or any output of the chain of 8 characters or more.
import { fc, it as prop } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { aSecret, aTemplate, anInstance } from '../../../test/support/builders.ts';
import { caseCounter, runs } from '../../../test/support/property-runs.ts';
import type { JsonValue } from '../../api/object-meta.ts';
import { readyCondition } from '../shared/conditions.ts';
import { HELPER_NAMES, type HelperName } from '../render/helpers.ts';
import { evaluateInstance, type InstanceEvaluation } from '../evaluation/instance-evaluation.ts';
import { MemorySource } from '../sources/memory-source.ts';

const tried = caseCounter('provenance');

/** How each helper takes the value so far (`x`): every helper of the list, some twice. */
const STEPS: Record<HelperName, ((x: string) => string)[]> = {
  default: [(x) => `default "fallback-value" ${x}`],
  required: [(x) => `required "a value is needed" ${x}`],
  quote: [(x) => `quote ${x}`],
  squote: [(x) => `squote ${x}`],
  toJson: [(x) => `toJson ${x}`],
  toYaml: [(x) => `toYaml ${x}`],
  indent: [(x) => `indent 2 ${x}`],
  nindent: [(x) => `nindent 4 ${x}`],
  b64enc: [(x) => `b64enc ${x}`],
  b64dec: [(x) => `b64dec ${x}`],
  sha256: [(x) => `sha256 ${x}`],
  upper: [(x) => `upper ${x}`],
  lower: [(x) => `lower ${x}`],
  trim: [(x) => `trim ${x}`],
  replace: [(x) => `replace "-" "." ${x}`, (x) => `replace ${x} "_" "literal-text-here"`],
  trunc: [(x) => `trunc 12 ${x}`, (x) => `trunc -10 ${x}`],
  join: [(x) => `join "+" ${x}`],
  split: [(x) => `split "-" ${x}`],
  eq: [(x) => `eq ${x} "other"`],
  ne: [(x) => `ne ${x} "other"`],
  lt: [(x) => `lt ${x} "m"`],
  le: [(x) => `le ${x} "m"`],
  gt: [(x) => `gt ${x} "m"`],
  ge: [(x) => `ge ${x} "m"`],
  and: [(x) => `and ${x} ${x}`],
  or: [(x) => `or ${x} "other"`],
  not: [(x) => `not ${x}`],
  concat: [(x) => `concat "pre-" ${x}`, (x) => `concat ${x} "-post"`],
  len: [(x) => `len ${x}`],
};
const ALL_STEPS = HELPER_NAMES.flatMap((name) => STEPS[name]);

/**
 * The first `length` steps of a chain over the Secret-backed parameter, as the inside of a
 * mustache (`upper (trim parameters.pw)`, which `{{ }}` or a subexpression's parentheses take).
 */
function expression(chain: readonly number[], length: number): string {
  return chain
    .slice(0, length)
    .reduce((inner, step, i) => ALL_STEPS[step]!(i === 0 ? inner : `(${inner})`), 'parameters.pw');
}

const HEAD = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n';

/** Places where the value makes the render fail, or where the API server would refuse it. */
const PLACEMENTS: { name: string; body: (e: string) => string }[] = [
  { name: 'as a namespace', body: (e) => `${HEAD}  name: a\n  namespace: {{${e}}}\n` },
  { name: 'inside a namespace', body: (e) => `${HEAD}  name: a\n  namespace: ns-{{${e}}}-x\n` },
  {
    name: 'as a Namespace',
    body: (e) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{${e}}}\n`,
  },
  {
    name: 'as two label keys',
    body: (e) => `${HEAD}  name: a\n  labels:\n    {{${e}}}: a\n    {{${e}}}: b\n`,
  },
  {
    name: 'as a wave',
    body: (e) => `${HEAD}  name: a\n  annotations:\n    stencil.dev/wave: "{{${e}}}"\n`,
  },
  { name: 'as a name the API server refuses', body: (e) => `${HEAD}  name: x{{${e}}}\n` },
];

async function evaluate(body: string, secret: string): Promise<InstanceEvaluation> {
  return evaluateInstance({
    instance: anInstance([{ name: 'pw', valueFrom: { secretKeyRef: { name: 's', key: 'pw' } } }]),
    template: aTemplate([{ name: 'pw', type: 'string' }], { handlebars: body }),
    namespaceLabels: {},
    port: new MemorySource([aSecret('s', 'team-a', { pw: secret })]),
  });
}

function texts(value: unknown, out: string[]): string[] {
  if (typeof value === 'string') out.push(value);
  else if (typeof value === 'number') out.push(String(value));
  else if (Array.isArray(value)) for (const item of value) texts(item, out);
  else if (typeof value === 'object' && value !== null)
    for (const [key, item] of Object.entries(value)) texts(item, out.concat(key));
  return out;
}

/** What each prefix of the chain evaluates to, as the texts it holds (a list's items too). */
async function chainOutputs(chain: readonly number[], secret: string): Promise<string[]> {
  const outputs: string[] = [];
  for (let length = 1; length <= chain.length; length++) {
    const body = `${HEAD}  name: probe\ndata:\n  out: {{toJson (${expression(chain, length)})}}\n`;
    const probe = await evaluate(body, secret);
    if (!probe.ok) break;
    texts((probe.resources[0]!.data as Record<string, JsonValue>).out, outputs);
  }
  return outputs.filter((text) => text.length >= 8);
}

/** Everything of an evaluation a user could read: conditions, and what the operator derives. */
function seen(evaluation: InstanceEvaluation): string[] {
  const { redactor } = evaluation;
  const conditions = [...evaluation.conditions, readyCondition(evaluation.conditions)];
  const shown = conditions.flatMap((c) => [c.reason, c.message]);
  shown.push(evaluation.problem?.path ?? '');
  for (const object of evaluation.resources) {
    const name = object.metadata.name ?? '';
    // The API server's refusal, an Event, a log line: each quotes the name it was given.
    shown.push(redactor.redact(`${object.kind} "${name}" is invalid: metadata.name: "${name}"`));
    // `stencil diff` shows every string of the objects through the redactor.
    for (const text of texts(object, [])) shown.push(redactor.redact(text));
  }
  return shown;
}

const secretValue = fc.oneof(
  fc.string({ minLength: 8, maxLength: 40 }),
  fc
    .array(fc.stringMatching(/^[A-Za-z0-9]{2,8}$/), { minLength: 2, maxLength: 5 })
    .map((parts) => parts.join('-'))
    .filter((text) => text.length >= 8),
  fc.string({ minLength: 6, maxLength: 30 }).map((text) => Buffer.from(text).toString('base64')),
);

describe('property: no Secret value, and nothing a helper made of it, in any message', () => {
  it('covers every helper', () => {
    expect(Object.keys(STEPS).sort()).toEqual([...HELPER_NAMES].sort());
  });

  prop.prop(
    [
      secretValue,
      fc.array(fc.nat(ALL_STEPS.length - 1), { minLength: 1, maxLength: 4 }),
      fc.constantFrom(...PLACEMENTS),
    ],
    runs(1000),
  )('for any Secret, chain of helpers and placement', async (secret, chain, placement) => {
    tried('chains of helpers');
    const outputs = await chainOutputs(chain, secret);
    const evaluation = await evaluate(placement.body(expression(chain, chain.length)), secret);
    if (evaluation.problem?.message.includes('Parse error'))
      throw new Error(evaluation.problem.message);
    if (!evaluation.ok) tried('chains of helpers ... of which the render failed');
    for (const text of seen(evaluation)) {
      const parts = text.split(/\[redacted: parameters\.pw\]/);
      for (const part of parts) {
        expect(part).not.toContain(secret);
        for (const output of outputs) expect(part).not.toContain(output);
      }
    }
  });
});
