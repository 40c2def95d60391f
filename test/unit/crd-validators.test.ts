// tools/crd-validators.ts, the generator of src/engine/crd-schema/crd-validators.generated.ts: what
// it refuses to generate, and that what it writes needs nothing of ajv at run time (and matches
// `pattern`s as RE2).
import { describe, expect, it } from 'vitest';
import { CRD_SCHEMAS } from '../../src/api/schemas.generated.ts';
import { crdValidatorsSource } from '../../tools/crd-validators.ts';

const withRules = (rules: { rule: string }[]): Record<string, object> => ({
  Thing_v1: { type: 'object', 'x-kubernetes-validations': rules },
});

describe('crdValidatorsSource', () => {
  it('fails on a rule that is not valid CEL, as creating the CRD would', () => {
    expect(() => crdValidatorsSource(withRules([{ rule: 'self.a ==' }]))).toThrow();
  });

  it('leaves out transition rules (oldSelf): objects are checked as created', () => {
    const source = crdValidatorsSource(withRules([{ rule: 'self == oldSelf' }]));
    expect(source).not.toContain('celRuleCheck(');
  });

  it('fails on a keyword whose ajv run-time helper the engine does not provide', () => {
    const schema = { type: 'array', uniqueItems: true, items: { type: 'object' } };
    expect(() => crdValidatorsSource({ Thing_v1: schema })).toThrow(
      /no engine helper for require\("ajv\/dist\/runtime\/equal"\)/,
    );
  });

  it("matches a `pattern` with the engine's RE2, never with RegExp", () => {
    const source = crdValidatorsSource({ Thing_v1: { type: 'string', pattern: '^a+$' } });
    expect(source).toContain("import { re2RegExp } from './re2.ts';");
    expect(source).toMatch(/= re2RegExp;/);
    expect(source).not.toContain('new RegExp');
  });

  it('fails on a pattern that is not RE2, as creating the CRD would', () => {
    expect(() => crdValidatorsSource({ Thing_v1: { type: 'string', pattern: '(?=a)' } })).toThrow(
      'the pattern (?=a) is not valid RE2',
    );
  });

  it("generates, from the CRDs' schemas, a module that imports only the engine", () => {
    const source = crdValidatorsSource(CRD_SCHEMAS);
    const imports = source.match(/^import .* from .*$/gm);
    expect(imports).toEqual([
      "import { CRD_FORMATS, celRuleCheck, listMapKeysCheck, ucs2length } from './crd-keywords.ts';",
      "import { re2RegExp } from './re2.ts';",
    ]);
    expect(source).not.toContain('require(');
    for (const name of Object.keys(CRD_SCHEMAS)) {
      expect(source).toContain(`export const ${name} = `);
    }
  });
});
