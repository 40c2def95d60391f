// The formats of the built-in kinds' schemas, checked as the API server's Go JSON decoding checks
// them (ADR 0029): a value these refuse is one the server cannot decode. Each was compared with
// the decoding in k8s.io/apimachinery v0.36.3 (metav1.Time, MicroTime, resource.Quantity,
// []byte and the integer kinds).
import type { FormatDefinition } from 'ajv';

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
// 2^63 is exact as a double; every double below it is at most 2^63 - 1024, so `<` is the bound.
const INT64_LIMIT = 2 ** 63;

/** A whole number that fits a Go int32 (anything else fails to decode). */
export function isInt32(n: number): boolean {
  return Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX;
}

/** A whole number that fits a Go int64. */
export function isInt64(n: number): boolean {
  return Number.isInteger(n) && n >= -INT64_LIMIT && n < INT64_LIMIT;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})([.,]\d+)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/**
 * metav1.Time: Go's `time.Parse(time.RFC3339, s)`. Upper-case T and Z only, no leap second, a
 * real calendar date, fractional seconds after `.` or `,`, and an offset of at most 24:60 (Go
 * checks no more than that).
 */
export function isTime(text: string): boolean {
  return matchesTime(text, false);
}

/**
 * metav1.MicroTime: RFC 3339 with exactly six decimals (`RFC3339Micro`), after a `.` or a `,`:
 * Go's time.Parse takes either separator before a fraction the layout asks for.
 */
export function isMicroTime(text: string): boolean {
  return matchesTime(text, true);
}

function matchesTime(text: string, micro: boolean): boolean {
  const m = RFC3339.exec(text);
  if (!m || (micro && !/^[.,]\d{6}$/.test(m[7] ?? ''))) return false;
  const number = (group: number): number => Number(m[group] ?? 0);
  const [year, month, day] = [number(1), number(2), number(3)];
  const offsetValid = m[8] === undefined || (number(8) <= 24 && number(9) <= 60);
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysIn(year, month) &&
    number(4) < 24 &&
    number(5) < 60 &&
    number(6) < 60 &&
    offsetValid
  );
}

/**
 * `[]byte`: standard base64 with padding, as Go's encoding/json decodes it (which skips `\r` and
 * `\n`). The empty string is an empty value.
 */
export function isBase64(text: string): boolean {
  return /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(
    text.replace(/[\r\n]/g, ''),
  );
}

const QUANTITY = /^[+-]?\d*(?:\.\d*)?([eEinumkKMGTP]*[+-]?\d*)$/;
const SUFFIXES = new Set(['', 'n', 'u', 'm', 'k', 'M', 'G', 'T', 'P', 'E']);
const BINARY_SUFFIXES = new Set(['Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei']);

/**
 * resource.Quantity in a string: `ParseQuantity(strings.TrimSpace(s))`. A sign, digits with an
 * optional fraction (either part may be empty: Go takes `.` and `+` as zero), then a decimal SI
 * suffix (n u m k M G T P E), a binary one (Ki … Ei) or an exponent (`e3`, `E-2`).
 */
export function isQuantity(text: string): boolean {
  const trimmed = text.trim();
  if (trimmed === '') return false;
  const suffix = QUANTITY.exec(trimmed)?.[1];
  if (suffix === undefined) return false;
  if (SUFFIXES.has(suffix) || BINARY_SUFFIXES.has(suffix)) return true;
  const exponent = /^[eE]([+-]?\d+)$/.exec(suffix)?.[1];
  // strconv.ParseInt(…, 64): an exponent beyond int64 is refused.
  return exponent !== undefined && isInt64Text(exponent);
}

function isInt64Text(text: string): boolean {
  const value = BigInt(text);
  return value >= -(2n ** 63n) && value < 2n ** 63n;
}

/**
 * The formats of the built-in kinds, by the names the bundle uses. A JSON number is always a valid
 * quantity (Go parses its text), so `quantity` checks strings only.
 */
export const BUILT_IN_FORMATS: Readonly<
  Record<string, FormatDefinition<string> | FormatDefinition<number>>
> = {
  'date-time': { type: 'string', validate: isTime },
  'micro-time': { type: 'string', validate: isMicroTime },
  byte: { type: 'string', validate: isBase64 },
  quantity: { type: 'string', validate: isQuantity },
  int32: { type: 'number', validate: isInt32 },
  int64: { type: 'number', validate: isInt64 },
};

/** What each format asks for, in a problem message. */
export const FORMAT_EXPECTATIONS: Readonly<Record<string, string>> = {
  'date-time': 'an RFC 3339 date-time such as 2026-01-02T15:04:05Z',
  'micro-time': 'an RFC 3339 date-time with six decimals such as 2026-01-02T15:04:05.000000Z',
  byte: 'base64 (standard alphabet, padded)',
  quantity: 'a quantity such as 500m, 1.5, 2Gi or 1e3',
  int32: 'a whole number that fits in 32 bits',
  int64: 'a whole number that fits in 64 bits',
  float: 'a number that fits in 32 bits',
};
