// CEL expressions evaluated with @bufbuild/cel (a real CEL implementation, never a home-made
// one): the CRDs' `x-kubernetes-validations` rules in the offline validator, run from their own
// rule text, so the validator cannot drift from the schema. Programs are parsed and planned
// once per expression.
import { celEnv, isCelError, parse, plan, type CelInput } from '@bufbuild/cel';

/** A compiled expression over the variable `self`. */
export type CelProgram = (
  self: unknown,
) => { ok: true; value: unknown } | { ok: false; error: string };

const env = celEnv();
const programs = new Map<string, CelProgram>();

/**
 * JSON as CEL sees a Kubernetes object: objects are maps, whole numbers are `int` (as the API
 * server types integer fields), other numbers `double`.
 */
export function toCel(value: unknown): CelInput {
  if (Array.isArray(value)) return value.map(toCel);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === 'object' && value !== null)
    return new Map(Object.entries(value).map(([k, v]) => [k, toCel(v)]));
  return value as CelInput;
}

/** Parses and plans `expression`; throws with the parser's message when it is not valid CEL. */
export function compileCel(expression: string): CelProgram {
  const cached = programs.get(expression);
  if (cached) return cached;
  const run = plan(env, parse(expression));
  const program: CelProgram = (self) => {
    const result = run({ self: toCel(self) });
    return isCelError(result) ? { ok: false, error: result.message } : { ok: true, value: result };
  };
  programs.set(expression, program);
  return program;
}

/**
 * A CRD rule that compares with the previous object (`oldSelf`): the API server evaluates it on
 * updates only, so a check of an object as created skips it.
 */
export function isTransitionRule(rule: string): boolean {
  return /\boldSelf\b/.test(rule);
}

/** Operators the evaluator handles itself rather than through its function table. */
const OPERATORS = new Set(['_&&_', '_||_', '_?_:_', '_[_]', '@not_strictly_false']);

/**
 * The functions `expression` calls that this CEL environment lacks, such as the Kubernetes CEL
 * libraries (`isURL`, `quantity`, `url`, `format.*`): evaluated here they would error, and an
 * erroring rule fails. Throws when `expression` is not valid CEL.
 */
export function missingFunctions(expression: string): string[] {
  const missing = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (typeof node === 'object' && node !== null) {
      const call = node as { $typeName?: string; function?: unknown };
      if (call.$typeName === 'cel.expr.Expr.Call' && typeof call.function === 'string') {
        if (!OPERATORS.has(call.function) && !env.funcs.find(call.function)) {
          missing.add(call.function);
        }
      }
      for (const value of Object.values(node)) walk(value);
    }
  };
  // Only the expression: the source info keeps the macros (all, has, map) as they were written.
  walk(parse(expression).expr);
  return [...missing];
}
