// Patterns in RE2, as the API server reads a CRD's `pattern` (Go's regexp package), matched by
// re2js, a port of RE2/J: linear-time matching and RE2's own parser, so what it refuses and how
// it reads a pattern are RE2's (`.` is any character but `\n`, `\s` is `[\t\n\f\r ]`; no
// lookaround, no backreferences; repetition counts up to 1,000, nested ones multiplied). Neither a
// parameter's `pattern` (parameters/parameter-constraints.ts) nor a CRD schema's `pattern`
// (crd-ajv.ts, for the CRDs a Template renders and those of --crds) is ever given to JavaScript's
// RegExp, which backtracks: `(a+)+$` takes seconds on 30 characters, `a*a*a*a*a*b` does not finish
// on 2,000.
//
// Linear is not cheap enough on its own: the work is up to (program size × input length), and
// RE2 allows programs of over a million instructions. Two bounds keep one check short whatever
// the pattern and the value: a pattern whose program is over MAX_PROGRAM instructions is refused,
// and a value whose check could take more than MAX_MATCH_STEPS (program size × characters) is not
// checked. The second bound is the worst case, reached when re2js's DFA gives up on a pattern and
// it falls back to simulating the NFA (about 40 ns a step); usual patterns run far below it.
import { RE2JS } from 're2js';

export interface Re2Pattern {
  /**
   * Whether the pattern matches somewhere in `text` (unanchored, like RE2's MatchString), or
   * `undefined` when the check could take more than {@link MAX_MATCH_STEPS} steps.
   */
  matches(text: string): boolean | undefined;
}

export type Re2Compiled = { ok: true; pattern: Re2Pattern } | { ok: false; message: string };

/** Instructions of a compiled pattern: `(a{999}|b{999}|...)` with 21 alternatives has more. */
export const MAX_PROGRAM = 20_000;
/** Program size × characters of one check: a second at worst, whatever the pattern. */
export const MAX_MATCH_STEPS = 20_000_000;

/** ajv's RegExpEngine (its `code.regExp` option): ajv does not export the type by name. */
export interface Re2RegExpEngine {
  (pattern: string, flags: string): { test(text: string): boolean; toString(): string };
  /** What ajv's standalone code calls in place of the function. */
  code: string;
}

/** A check over the budget, for callers (ajv's) that must answer true or false or throw. */
export class Re2CheckTooCostly extends Error {}

/** Whether checking `length` UTF-16 units against a program of `size` stays within budget. */
const affordable = (size: number, length: number): boolean =>
  size * (length + 1) <= MAX_MATCH_STEPS;

/**
 * Compiles `source` as RE2. Refused, with a message completing "the pattern P ...": not RE2
 * (re2js's parser, in the words of Go's: `is not valid RE2: invalid or unsupported Perl syntax:
 * (?=`), or too large to check.
 */
export function compileRe2(source: string): Re2Compiled {
  let re: RE2JS;
  try {
    re = RE2JS.compile(source);
  } catch (error) {
    const why = (error as Error).message.replace(/^error parsing regexp: /, '');
    return { ok: false, message: `is not valid RE2: ${why}` };
  }
  const size = re.programSize();
  if (size > MAX_PROGRAM) {
    return {
      ok: false,
      message: `is too large to check: it compiles to ${size} instructions, more than ${MAX_PROGRAM}`,
    };
  }
  return {
    ok: true,
    pattern: { matches: (text) => (affordable(size, text.length) ? re.test(text) : undefined) },
  };
}

/**
 * The `pattern` engine of ajv (its `code.regExp` option): `(pattern, flags)` to an object with
 * `test`, where ajv would call `new RegExp`. The flags (ajv's `u`) are ignored: RE2 reads code
 * points always. A pattern compileRe2 refuses throws, so the schema does not compile (as the API
 * server refuses the CRD); a value over the budget throws {@link Re2CheckTooCostly}, which the
 * caller of the validating function reports as a check not made.
 *
 * `code` is what ajv's standalone code calls instead (tools/crd-validators.ts imports it into the
 * generated validators by that name).
 */
export const re2RegExp: Re2RegExpEngine = Object.assign(
  (source: string) => {
    const compiled = compileRe2(source);
    if (!compiled.ok) throw new Error(`the pattern ${source} ${compiled.message}`);
    const { pattern } = compiled;
    return {
      test(text: string): boolean {
        const matches = pattern.matches(text);
        if (matches === undefined) {
          throw new Re2CheckTooCostly(
            `a value of ${text.length} characters is too long to check against the pattern ` +
              `${source} (more than ${MAX_MATCH_STEPS} steps)`,
          );
        }
        return matches;
      },
      // ajv keeps one compiled pattern per distinct toString(): it must name the pattern.
      toString: () => `re2:${source}`,
    };
  },
  { code: 're2RegExp' },
);
