// Parameter types (SPEC §3 "Types"): checking and converting a resolved value to its declared
// type, the type-mismatch messages (never quoting a Secret), and the per-type empty value.
import { InstanceReason } from '../../api/condition.ts';
import type { JsonValue } from '../../api/object-meta.ts';
import type { ParameterType } from '../../api/template.ts';
import { parseGoBool, parseGoFloat } from './go-parse.ts';
import { failure, success, type Outcome } from '../shared/problem.ts';
import { isJsonObject as isMap } from '../shared/json-map.ts';
import { MAX_MERGE_DEPTH } from './value-merge.ts';

/** What {@link coerceParameter} checks. */
export interface CoercionInput {
  /** Parameter name, used in the problem path (`parameters.<name>`) and message. */
  name: string;
  /** Declared type; absent means any value passes through unchanged. */
  type?: ParameterType;
  value: JsonValue;
  /** The value came from a Secret: it must never appear in a message. */
  secret: boolean;
}

/** Offending values longer than this (as rendered in a message) are cut. */
export const MAX_QUOTED_VALUE_LENGTH = 100;

const EXPECTED: Record<ParameterType, string> = {
  string: 'a string',
  number: 'a number',
  bool: 'a boolean',
  array: 'an array',
  object: 'an object',
};

/** How a failed value may be described: the value itself, or nothing about it (Secret). */
/** What a message says in place of a value that came from a Secret. */
export const SECRET_VALUE = 'a value from a Secret';

const SECRET_NOUN: Record<ParameterType, string> = {
  string: 'string',
  number: 'number',
  bool: 'boolean',
  array: 'JSON array',
  object: 'JSON object',
};

/** Cuts to `max` code points (never splitting a surrogate pair) and marks the cut. */
function truncate(text: string, max: number): string {
  const points = Array.from(text);
  return points.length <= max ? text : `${points.slice(0, max).join('')}…`;
}

/** The offending value as a message shows it: JSON text, cut, with lists and maps named. */
export function describeValue(value: JsonValue): string {
  if (typeof value === 'string') {
    return JSON.stringify(truncate(value, MAX_QUOTED_VALUE_LENGTH));
  }
  if (typeof value === 'number' && !Number.isFinite(value)) {
    return String(value); // JSON.stringify would say null
  }
  const text = truncate(JSON.stringify(value), MAX_QUOTED_VALUE_LENGTH);
  if (Array.isArray(value)) {
    return `a list ${text}`;
  }
  return isMap(value) ? `a map ${text}` : text;
}

function mismatch(input: CoercionInput, type: ParameterType): Outcome<JsonValue> {
  const expected = EXPECTED[type];
  let got: string;
  if (input.secret) {
    got = `${SECRET_VALUE} that is not a valid ${SECRET_NOUN[type]}`;
  } else if (input.value === null) {
    got = 'null (null never satisfies a typed parameter: give a value, or drop the type)';
  } else {
    got = describeValue(input.value);
  }
  return failure([
    {
      path: `parameters.${input.name}`,
      reason: InstanceReason.InvalidParameter,
      message: `parameter "${input.name}": expected ${expected}, got ${got}`,
    },
  ]);
}

/**
 * Whether `value` nests lists and maps deeper than `limit` levels (a scalar is level 0, `[1]` is
 * level 1). Iterative, so a value nested 100,000 levels is measured without a stack overflow:
 * everything recursive that later touches a parameter value (copies, merges, `toJson`, the
 * status write) runs only on values this has let through.
 */
export function nestsDeeperThan(value: JsonValue, limit: number): boolean {
  const stack: [JsonValue, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > limit) return true;
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) stack.push([child, depth + 1]);
  }
  return false;
}

function tooDeep(input: CoercionInput): Outcome<JsonValue> {
  return failure([
    {
      path: `parameters.${input.name}`,
      reason: InstanceReason.InvalidParameter,
      message: `parameter "${input.name}": nests deeper than ${MAX_MERGE_DEPTH} levels (the limit for any parameter value)`,
    },
  ]);
}

/** Any scalar, as text: numbers in JavaScript's shortest round-trip form (3, 2.5, 1e+21). */
function toStringValue(value: JsonValue): string | undefined {
  if (typeof value === 'string') {
    return value;
  }
  if (typeof value === 'number' || typeof value === 'boolean') {
    return String(value);
  }
  return undefined;
}

function toNumberValue(value: JsonValue): number | undefined {
  if (typeof value === 'number') {
    return value;
  }
  return typeof value === 'string' ? parseGoFloat(value) : undefined;
}

function toBoolValue(value: JsonValue): boolean | undefined {
  if (typeof value === 'boolean') {
    return value;
  }
  return typeof value === 'string' ? parseGoBool(value) : undefined;
}

/** JSON text, or `undefined` when it does not parse. JSON.parse makes `__proto__` an own key. */
function parseJson(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

function toArrayValue(value: JsonValue): JsonValue[] | undefined {
  const candidate = typeof value === 'string' ? parseJson(value) : value;
  return Array.isArray(candidate) ? candidate : undefined;
}

function toObjectValue(value: JsonValue): { [key: string]: JsonValue } | undefined {
  const candidate = typeof value === 'string' ? parseJson(value) : value;
  return candidate !== undefined && isMap(candidate) ? candidate : undefined;
}

const CONVERTERS: Record<ParameterType, (value: JsonValue) => JsonValue | undefined> = {
  string: toStringValue,
  number: toNumberValue,
  bool: toBoolValue,
  array: toArrayValue,
  object: toObjectValue,
};

/**
 * Checks a resolved parameter value (Template default or instance override) against its declared
 * type and converts it to what the template sees (SPEC §3 "Types").
 *
 * - `string`: any scalar; numbers and booleans become their text (`3` → `"3"`, `2.5` → `"2.5"`,
 *   `true` → `"true"`). A list or map fails.
 * - `number`: a native number, or a string Go's `strconv.ParseFloat` accepts; the result is a
 *   number (`"0x1p-2"` → 0.25; `"NaN"` and `"Inf"` give NaN and Infinity).
 * - `bool`: a native boolean, or a string Go's `strconv.ParseBool` accepts; the result is a
 *   boolean. Native numbers (0, 1) fail.
 * - `array` / `object`: a native list / map, or a string holding a JSON array / object, parsed
 *   (keys such as `__proto__` stay ordinary own keys). A plain string fails.
 * - no type: the value passes through unchanged, `null` included.
 *
 * Failure is one problem, reason `InvalidParameter`, path `parameters.<name>` (callers re-home
 * it), whose message names the parameter, the expected type and the offending value (as JSON,
 * cut after 100 characters) — unless `secret` is set, when it says nothing about the content.
 *
 * A value (as given, or as parsed from JSON text) nesting lists and maps deeper than
 * {@link MAX_MERGE_DEPTH} levels fails the same way, whatever the type, saying nothing of the
 * content.
 *
 * Traps: `null` never satisfies a typed parameter; the {@link emptyValue} of a `number` or `bool`
 * parameter (`""`) does not satisfy its type, so do not coerce the empty value; successful
 * results may share structure with `value` (native lists and maps are returned as they are).
 */
export function coerceParameter(input: CoercionInput): Outcome<JsonValue> {
  const { type, value } = input;
  if (nestsDeeperThan(value, MAX_MERGE_DEPTH)) return tooDeep(input);
  if (type === undefined) {
    return success(value);
  }
  const converted = value === null ? undefined : CONVERTERS[type](value);
  if (converted === undefined) return mismatch(input, type);
  // A string holding JSON is measured once parsed (JSON.parse itself does not recurse).
  return converted !== value && nestsDeeperThan(converted, MAX_MERGE_DEPTH)
    ? tooDeep(input)
    : success(converted);
}

/**
 * The value of a parameter that is neither overridden, required nor defaulted (SPEC §3 step 4):
 * `[]` for `array`, `{}` for `object`, `""` otherwise (including `number`, `bool` and no type).
 * Each call returns a fresh list or map.
 */
export function emptyValue(type?: ParameterType): JsonValue {
  if (type === 'array') {
    return [];
  }
  if (type === 'object') {
    return {};
  }
  return '';
}
