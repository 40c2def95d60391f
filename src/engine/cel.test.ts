import { describe, expect, it } from 'vitest';
import { CRD_SCHEMAS } from '../api/schemas.generated.ts';
import { compileCel, toCel } from './cel.ts';

interface SchemaNode {
  type?: string;
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
  for (const { rule } of node['x-kubernetes-validations'] ?? [])
    out.push({ at, rule, type: node.type ?? 'object' });
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

  it.each(crdRules.map((r) => [r.at, r] as const))(
    'compile and evaluate to a boolean: %s',
    (_at, { rule, type }) => {
      const result = compileCel(rule)(EMPTY[type] ?? {});
      expect(result.ok && typeof result.value).toBe('boolean');
    },
  );

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
