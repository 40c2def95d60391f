// Parameter constraints (ADR 0032): enum, pattern, minLength/maxLength and minimum/maximum. They
// are checked on a value once coerceParameter gave it its declared type, wherever the value came
// from (the Template default, an instance's literal, a valueFrom read, its defaultValue), so a
// TemplateInstance is held to what a typed API's schema enforces at admission. A value from a
// Secret is never described: the message names the parameter and the constraint only.
import { Buffer } from 'node:buffer';
import { InstanceReason } from '../../api/condition.ts';
import type { JsonValue } from '../../api/object-meta.ts';
import type { ParameterDeclaration } from '../../api/template.ts';
import { compileRe2, MAX_MATCH_STEPS, type Re2Compiled } from '../crd-schema/re2.ts';
import { canonicalJson } from '../shared/canonical-json.ts';
import { failure, success, type Outcome } from '../shared/problem.ts';
import { coerceParameter, describeValue, SECRET_VALUE } from './parameter-types.ts';

/**
 * The longest text (UTF-8 bytes) a pattern is checked against: as much as a ConfigMap holds. A
 * longer value fails instead of being passed unchecked. A maxLength below it refuses longer
 * values before the pattern runs.
 */
export const MAX_PATTERN_INPUT_BYTES = 1024 * 1024;

/** Enum entries a message lists before it says how many more there are. */
const LISTED_ENTRIES = 10;

export interface ConstraintInput {
  declaration: ParameterDeclaration;
  /** The value as coerceParameter returned it (a number parameter's "5" is 5 by now). */
  value: JsonValue;
  /** The value came from a Secret: it must never appear in a message. */
  secret: boolean;
}

/** A fault of a declaration's own constraints, found when the Template is validated. */
export interface DeclarationFault {
  /** Relative to the declaration: `pattern`, or `enum[2]`. */
  field: string;
  message: string;
}

const patterns = new Map<string, Re2Compiled>();

/** Compiled once per pattern text: resolution runs on every pass of every instance. */
function compiled(pattern: string): Re2Compiled {
  let entry = patterns.get(pattern);
  if (entry === undefined) {
    entry = compileRe2(pattern);
    if (patterns.size >= 256) patterns.delete(patterns.keys().next().value!);
    patterns.set(pattern, entry);
  }
  return entry;
}

/** Code points, as the API server counts a string's length (Go's utf8.RuneCountInString). */
function codePoints(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

/** The enum entries typed as the parameter is, so `"2"` in a number enum is 2. */
function typedEntries(declaration: ParameterDeclaration): JsonValue[] {
  return (declaration.enum ?? []).flatMap((entry) => {
    const typed = coerceParameter({
      name: declaration.name,
      type: declaration.type,
      value: entry,
      secret: false,
    });
    // A mistyped entry matches nothing: the Template's fault, reported when it is validated.
    return typed.ok ? [typed.value] : [];
  });
}

/** Equal as typed values: numbers by value (0 and -0 alike, NaN equal to NaN), else as JSON. */
function same(a: JsonValue, b: JsonValue): boolean {
  if (typeof a === 'number' && typeof b === 'number')
    return a === b || (Number.isNaN(a) && Number.isNaN(b));
  return canonicalJson(a) === canonicalJson(b);
}

function listed(entries: JsonValue[]): string {
  const shown = entries.slice(0, LISTED_ENTRIES).map(describeValue).join(', ');
  const more = entries.length - LISTED_ENTRIES;
  return more > 0 ? `${shown} (and ${more} more)` : shown;
}

/** What is wrong with a string value, completing "<value> ...", or undefined. */
function stringFault(declaration: ParameterDeclaration, text: string): string | undefined {
  const { minLength, maxLength, pattern } = declaration;
  if (minLength !== undefined || maxLength !== undefined) {
    const length = codePoints(text);
    if (minLength !== undefined && length < minLength)
      return `is shorter than the minimum length ${minLength}`;
    if (maxLength !== undefined && length > maxLength)
      return `is longer than the maximum length ${maxLength}`;
  }
  if (pattern === undefined) return undefined;
  const regex = compiled(pattern);
  if (!regex.ok) return undefined; // the caller reports the pattern itself
  if (Buffer.byteLength(text, 'utf8') > MAX_PATTERN_INPUT_BYTES)
    return `is longer than 1 MiB, the most a pattern is checked against`;
  const matches = regex.pattern.matches(text);
  if (matches === undefined)
    return `takes more than ${MAX_MATCH_STEPS} steps to check against the pattern ${pattern}`;
  return matches ? undefined : `does not match the pattern ${pattern}`;
}

/** What is wrong with a number value, completing "<value> ...", or undefined. */
function numberFault(declaration: ParameterDeclaration, value: number): string | undefined {
  const { minimum, maximum } = declaration;
  // Written as "not within" so NaN, which compares with nothing, fails both bounds.
  if (minimum !== undefined && !(value >= minimum))
    return Number.isNaN(value)
      ? `is not comparable with the minimum ${minimum}`
      : `is less than the minimum ${minimum}`;
  if (maximum !== undefined && !(value <= maximum))
    return Number.isNaN(value)
      ? `is not comparable with the maximum ${maximum}`
      : `is greater than the maximum ${maximum}`;
  return undefined;
}

/**
 * Checks a typed parameter value against its declaration's constraints, in the order enum,
 * minLength, maxLength, pattern, minimum, maximum; the first that fails is the one reported.
 * Length bounds and the pattern apply to string values, the bounds to numbers, enum to any
 * value (its entries typed as the parameter is). Failure is one problem, reason
 * `InvalidParameter`, path `parameters.<name>`, e.g. `parameter "replicas": 12 is greater than
 * the maximum 10`; a Secret's value reads `a value from a Secret`. A pattern that is not RE2
 * fails every string value, naming the pattern (the Template is invalid for it too).
 */
export function checkConstraints(input: ConstraintInput): Outcome<JsonValue> {
  const { declaration, value } = input;
  const fail = (message: string): Outcome<JsonValue> =>
    failure([
      {
        path: `parameters.${declaration.name}`,
        reason: InstanceReason.InvalidParameter,
        message: `parameter "${declaration.name}": ${message}`,
      },
    ]);
  // Described only on failure: describing cuts a long text, which costs as much as the check.
  const subject = (): string => (input.secret ? SECRET_VALUE : describeValue(value));
  if (declaration.enum !== undefined) {
    const entries = typedEntries(declaration);
    if (!entries.some((entry) => same(entry, value)))
      return fail(`${subject()} is not one of ${listed(entries)}`);
  }
  if (typeof value === 'string') {
    if (declaration.pattern !== undefined) {
      const regex = compiled(declaration.pattern);
      if (!regex.ok) return fail(`the pattern ${declaration.pattern} ${regex.message}`);
    }
    const fault = stringFault(declaration, value);
    if (fault !== undefined) return fail(`${subject()} ${fault}`);
  }
  if (typeof value === 'number') {
    const fault = numberFault(declaration, value);
    if (fault !== undefined) return fail(`${subject()} ${fault}`);
  }
  return success(value);
}

/** The types an enum may constrain: a typed API's schema has an enum only for scalars. */
const ENUM_TYPES = new Set<ParameterDeclaration['type']>(['string', 'number', 'bool']);

/**
 * The faults of a declaration's constraints themselves (Template validation): an enum on a
 * parameter that is not a string, number or bool, enum entries that do not satisfy the
 * parameter's type, and a pattern that is not RE2 or too large to check (see
 * crd-schema/re2.ts). The CRD's CEL rules tie the other constraints to their types and order the
 * bounds; CEL cannot see the enum's entries (they hold any JSON), so its type is checked here.
 */
export function declarationFaults(declaration: ParameterDeclaration): DeclarationFault[] {
  const name = declaration.name;
  const faults = enumFaults(declaration);
  if (declaration.pattern !== undefined) {
    const regex = compiled(declaration.pattern);
    if (!regex.ok)
      faults.push({
        field: 'pattern',
        message: `parameter "${name}": the pattern ${declaration.pattern} ${regex.message}`,
      });
  }
  return faults;
}

function enumFaults(declaration: ParameterDeclaration): DeclarationFault[] {
  const { name, type } = declaration;
  if (declaration.enum === undefined) return [];
  const prefix = `parameter "${name}": `;
  if (!ENUM_TYPES.has(type))
    return [{ field: 'enum', message: `${prefix}enum needs type string, number or bool` }];
  return declaration.enum.flatMap((entry, j) => {
    const typed = coerceParameter({ name, type, value: entry, secret: false });
    return typed.ok
      ? []
      : typed.problems.map((problem) => ({
          field: `enum[${j}]`,
          message: `${prefix}enum entry ${j}: ${problem.message.slice(prefix.length)}`,
        }));
  });
}
