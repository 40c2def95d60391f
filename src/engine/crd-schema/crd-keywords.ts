// What the CRD validators compiled at build time (crd-validators.generated.ts) call at run time:
// the formats the CRDs use and the Kubernetes keywords ajv does not know (CEL rules, list-map
// keys). tools/crd-validators.ts emits the calls; the rules' text is in the generated code.
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { compileCel, type CelProgram } from './cel.ts';

/**
 * The length of `text` in Unicode code points, as the API server counts maxLength and minLength
 * (utf8.RuneCountInString) and as ajv's own ucs2length does: a surrogate pair counts once, a lone
 * surrogate once.
 */
export function ucs2length(text: string): number {
  let length = 0;
  for (const _codePoint of text) length++;
  return length;
}

/** One entry of `x-kubernetes-validations`. */
export interface CelRule {
  rule: string;
  message?: string;
  /** Evaluated like the API server does: its string result is the message, else `message`. */
  messageExpression?: string;
}

/**
 * The formats the CRDs use, as ajv checks them: RFC 3339 `date-time` (ajv-formats' full mode,
 * as `addFormats(ajv, ['date-time'])` gives it) and `int64` for whole numbers.
 */
export const CRD_FORMATS = {
  'date-time': fullFormats['date-time'],
  int64: { type: 'number', validate: (n: number): boolean => Number.isInteger(n) },
} as const;

/**
 * The check of one `x-kubernetes-validations` list: the message of each rule `self` fails, in
 * order (empty when all pass). As the API server does, a rule that does not evaluate to true
 * (false or an error) fails. Transition rules are left out by the generator (objects are checked
 * as created). Programs are compiled on first use, so a start that never validates pays nothing;
 * none can fail to compile, since `npm run generate` compiled every rule.
 */
export function celRuleCheck(rules: readonly CelRule[]): (self: unknown) => string[] {
  let programs: { program: CelProgram; messageProgram?: CelProgram; message: string }[];
  return (self) => {
    programs ??= rules.map(({ rule, message, messageExpression }) => ({
      program: compileCel(rule),
      ...(messageExpression ? { messageProgram: compileCel(messageExpression) } : {}),
      message: message ?? `failed rule: ${rule}`,
    }));
    return programs
      .filter(({ program }) => {
        const result = program(self);
        return !result.ok || result.value !== true;
      })
      .map(({ message, messageProgram }) => {
        const computed = messageProgram?.(self);
        return computed?.ok && typeof computed.value === 'string' ? computed.value : message;
      });
  };
}

/** A list item whose `x-kubernetes-list-map-keys` repeat an earlier item's. */
export interface DuplicateKey {
  index: number;
  message: string;
}

/** The check of `x-kubernetes-list-map-keys`: each item whose keys an earlier item had. */
export function listMapKeysCheck(keys: readonly string[]): (data: unknown) => DuplicateKey[] {
  return (data) => {
    if (!Array.isArray(data)) return [];
    const seen = new Set<string>();
    const duplicates: DuplicateKey[] = [];
    data.forEach((item: unknown, index) => {
      if (typeof item !== 'object' || item === null) return;
      const key = Object.fromEntries(keys.map((k) => [k, (item as Record<string, unknown>)[k]]));
      const id = JSON.stringify(key);
      if (seen.has(id)) duplicates.push({ index, message: `Duplicate value: ${id}` });
      seen.add(id);
    });
    return duplicates;
  };
}
