import { describe, expect, it } from 'vitest';
import { CRD_SCHEMAS } from '../../api/schemas.generated.ts';
import { compileCel, isTransitionRule, toCel } from './cel.ts';

interface SchemaNode {
  type?: string;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-validations'?: { rule: string }[];
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
}

/** Every CEL rule of the CRDs, with the type of the value it is evaluated on. */
function rulesOf(
  node: SchemaNode,
  at: string,
  out: { at: string; rule: string; type: string }[],
): void {
  const type = node['x-kubernetes-int-or-string'] ? 'string' : (node.type ?? 'object');
  for (const { rule } of node['x-kubernetes-validations'] ?? []) out.push({ at, rule, type });
  for (const [name, child] of Object.entries(node.properties ?? {}))
    rulesOf(child, `${at}.${name}`, out);
  if (node.items) rulesOf(node.items, `${at}[*]`, out);
  if (typeof node.additionalProperties === 'object')
    rulesOf(node.additionalProperties, `${at}.*`, out);
}

const crdRules: { at: string; rule: string; type: string }[] = [];
for (const [kind, schema] of Object.entries(CRD_SCHEMAS))
  rulesOf(schema as unknown as SchemaNode, kind, crdRules);

const EMPTY: Record<string, unknown> = { object: {}, array: [], string: '' };

describe("the CRDs' own CEL rules", () => {
  it('are found in the generated schemas', () => {
    expect(crdRules.length).toBeGreaterThanOrEqual(6);
  });

  // Transition rules (oldSelf) run on updates only, in the API server; the offline validator
  // checks objects as created and skips them (isTransitionRule).
  it.each(crdRules.filter((r) => !isTransitionRule(r.rule)).map((r) => [r.at, r] as const))(
    'compile and evaluate to a boolean: %s',
    (_at, { rule, type }) => {
      const result = compileCel(rule)(EMPTY[type] ?? {});
      expect(result.ok && typeof result.value).toBe('boolean');
    },
  );

  const MAX_UNAVAILABLE = 'type(self) == int ? self >= 1 : self.matches("^[1-9][0-9]?%$|^100%$")';
  it.each([
    [2, true],
    [0, false],
    ['25%', true],
    ['100%', true],
    ['0%', false],
    ['150%', false],
    ['25', false],
  ] as const)('rollout.maxUnavailable %j is valid: %s', (value, valid) => {
    expect(crdRules.some((r) => r.rule === MAX_UNAVAILABLE)).toBe(true);
    expect(compileCel(MAX_UNAVAILABLE)(toCel(value))).toEqual({ ok: true, value: valid });
  });

  it('include the immutability of a TemplateRevision, as a transition rule', () => {
    const immutable = crdRules.find((r) => r.at === 'TemplateRevision_v1alpha1.spec');
    expect(immutable && isTransitionRule(immutable.rule)).toBe(true);
    expect(isTransitionRule('self.size() > 0')).toBe(false);
  });

  // The semantics the offline validator relied on before it ran the rule text itself.
  it.each([
    ['[has(self.handlebars)].filter(e, e).size() == 1', { handlebars: 'x' }, true],
    ['[has(self.handlebars)].filter(e, e).size() == 1', {}, false],
    [
      '!(has(self.required) && self.required && has(self.disableOverride) && self.disableOverride)',
      { required: true, disableOverride: true },
      false,
    ],
    [
      '!(has(self.required) && self.required && has(self.disableOverride) && self.disableOverride)',
      { required: true, disableOverride: false },
      true,
    ],
    ['!self.exists(n, n == "*") || self.size() == 1', ['*'], true],
    ['!self.exists(n, n == "*") || self.size() == 1', ['*', 'team-a'], false],
    ['!self.exists(n, n == "*") || self.size() == 1', ['team-a', 'team-b'], true],
    [
      '[has(self.secretKeyRef), has(self.configMapKeyRef), has(self.objectFieldRef)].filter(s, s).size() == 1',
      { secretKeyRef: {}, configMapKeyRef: {} },
      false,
    ],
    [
      '[has(self.secretKeyRef), has(self.configMapKeyRef), has(self.objectFieldRef)].filter(s, s).size() == 1',
      { objectFieldRef: {} },
      true,
    ],
    ['self.startsWith(".")', '.status.phase', true],
    ['self.startsWith(".")', 'status.phase', false],
    ['!(self.startsWith("{") && self.endsWith("}"))', '{.a}', false],
    ['!(self.startsWith("{") && self.endsWith("}"))', '.a', true],
  ])('%s on %j is %s', (rule, self, expected) => {
    expect(crdRules.some((r) => r.rule === rule)).toBe(true);
    expect(compileCel(rule)(self)).toEqual({ ok: true, value: expected });
  });
});

describe('compileCel', () => {
  it('throws with the parser position for text that is not CEL', () => {
    expect(() => compileCel('self.((')).toThrow(/1:\d+/);
  });

  it('reports an evaluation error instead of throwing', () => {
    const result = compileCel('self.missing == 1')({});
    expect(result.ok).toBe(false);
  });

  it('compiles an expression once', () => {
    expect(compileCel('self == 1')).toBe(compileCel('self == 1'));
  });
});

describe('toCel', () => {
  it('types whole numbers as int and others as double, objects as maps', () => {
    expect(toCel({ a: [1, 1.5, 'x', null, true] })).toEqual(
      new Map([['a', [1n, 1.5, 'x', null, true]]]),
    );
    expect(compileCel('self.n == 3 && self.f > 1.0')({ n: 3, f: 1.5 })).toEqual({
      ok: true,
      value: true,
    });
  });
});
