// The one ajv configuration for Kubernetes schemas: the x-kubernetes-* keywords as ajv keywords
// (CEL rules and list-map keys checked by crd-keywords.ts), the formats the CRDs use, and `pattern`
// read and matched as RE2 (re2.ts), as the API server does, never by a backtracking RegExp. Used by
// `npm run generate` for the standalone CRD validators (tools/crd-validators.ts) and, at run time,
// by the validation of rendered objects (engine/object-schema).
import { Ajv, _, stringify, type KeywordCxt, type Options } from 'ajv';
import { compileCel, isTransitionRule } from './cel.ts';
import { CRD_FORMATS, celRuleCheck, listMapKeysCheck, type CelRule } from './crd-keywords.ts';
import { re2RegExp } from './re2.ts';

/**
 * `x-kubernetes-validations`: one error per failing rule, its message the rule's (as the API
 * server words it). Every rule is compiled here, so a rule that is not valid CEL fails generation
 * as it would fail CRD creation. Transition rules (oldSelf) apply to updates only: left out.
 */
function celRulesCode(cxt: KeywordCxt): void {
  const { gen, data } = cxt;
  const rules = (cxt.schema as CelRule[]).filter(({ rule }) => !isTransitionRule(rule));
  for (const { rule, messageExpression } of rules) {
    compileCel(rule);
    if (messageExpression) compileCel(messageExpression);
  }
  if (rules.length === 0) return;
  const check = gen.scopeValue('keyword', {
    ref: celRuleCheck(rules),
    code: _`celRuleCheck(${stringify(rules)})`,
  });
  gen.forOf('message', _`${check}(${data})`, (message) => cxt.error(false, { message }));
}

/** `x-kubernetes-list-map-keys`: one error per item whose keys an earlier item had. */
function listMapKeysCode(cxt: KeywordCxt): void {
  const { gen, data } = cxt;
  const keys = cxt.schema as string[];
  const check = gen.scopeValue('keyword', {
    ref: listMapKeysCheck(keys),
    code: _`listMapKeysCheck(${stringify(keys)})`,
  });
  gen.forOf('duplicate', _`${check}(${data})`, (duplicate) =>
    cxt.error(false, { index: _`${duplicate}.index`, message: _`${duplicate}.message` }),
  );
}

/**
 * An ajv instance that knows the Kubernetes keywords, in strict mode, reporting every error, its
 * `pattern`s RE2. `options` adds to (or overrides) the defaults: `code` for standalone generation
 * (merged with the RE2 engine), relaxed type rules for schemas written by others. A schema whose
 * `pattern` is not RE2 fails to compile; a validating function throws Re2CheckTooCostly for a
 * value too long to check against its pattern (re2.ts).
 */
export function createKubernetesAjv(options: Options = {}): Ajv {
  const ajv = new Ajv({
    // strictRequired is off: Kubernetes schemas name required fields inside oneOf/not branches.
    allErrors: true,
    strict: true,
    strictRequired: false,
    verbose: true,
    ...options,
    code: { regExp: re2RegExp, ...options.code },
  });
  ajv.addFormat('date-time', CRD_FORMATS['date-time']);
  ajv.addFormat('int64', CRD_FORMATS.int64);
  ajv.addVocabulary([
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-list-type',
    'x-kubernetes-map-type',
    'x-kubernetes-int-or-string',
    'x-kubernetes-embedded-resource',
  ]);
  ajv.addKeyword({
    keyword: 'x-kubernetes-validations',
    schemaType: 'array',
    code: celRulesCode,
    error: { message: ({ params }) => _`${params.message}` },
  });
  ajv.addKeyword({
    keyword: 'x-kubernetes-list-map-keys',
    schemaType: 'array',
    code: listMapKeysCode,
    error: {
      message: ({ params }) => _`${params.message}`,
      params: ({ params }) => _`{index: ${params.index}}`,
    },
  });
  return ajv;
}
