// Go's strconv.ParseFloat(s, 64) and strconv.ParseBool, reproduced exactly (same accepted strings,
// same values), so that `number` and `bool` parameters behave as SPEC §3 "Types" promises.

const GO_TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const GO_FALSE = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);

/**
 * Go's `strconv.ParseBool`: exactly `1 t T TRUE true True` (true) and `0 f F FALSE false False`
 * (false).
 *
 * @returns the boolean, or `undefined` where Go returns an error. Trap: no trimming and no other
 * spellings (`" true"`, `"yes"`, `"on"`, `"tRUE"` all fail), unlike YAML 1.1.
 */
export function parseGoBool(s: string): boolean | undefined {
  if (GO_TRUE.has(s)) {
    return true;
  }
  if (GO_FALSE.has(s)) {
    return false;
  }
  return undefined;
}

/** Go's `special`: `NaN` unsigned, `Inf`/`Infinity` with an optional sign, any letter case. */
const SPECIAL = /^(?:([+-]?)(?:inf|infinity)|nan)$/i;

/** Go stops accumulating an exponent once it reaches this (the result is ±0 or out of range). */
const EXPONENT_CAP = 10_000;

/** Smallest binary exponent of a float64's lowest mantissa bit (the smallest denormal). */
const MIN_LSB_EXPONENT = -1074;
const MANTISSA_BITS = 52;

/** A syntactically valid number as Go's `readFloat` sees it, before conversion. */
interface ScannedFloat {
  negative: boolean;
  hex: boolean;
  /** Mantissa digits (decimal or hexadecimal), without point or underscores. */
  digits: string;
  /** How many of `digits` come before the point. */
  pointIndex: number;
  /** Decimal (`e`) or binary (`p`) exponent, capped like Go's. */
  exponent: number;
}

/** Scanner state shared by the readFloat helpers. */
interface Cursor {
  s: string;
  i: number;
  underscores: boolean;
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

function isHexLetter(c: string | undefined): boolean {
  const l = c?.toLowerCase();
  return l !== undefined && l >= 'a' && l <= 'f';
}

/**
 * Go's `underscoreOK`: an underscore must sit between two digits, where a base prefix (`0x`)
 * counts as a digit. Go applies it to every number that contains one, decimal included.
 */
function underscoreOK(text: string): boolean {
  let s = text;
  if (s.startsWith('-') || s.startsWith('+')) {
    s = s.slice(1);
  }
  let saw = '^';
  let i = 0;
  const hex = /^0[xX]/.test(s);
  if (/^0[bBoOxX]/.test(s)) {
    i = 2;
    saw = '0';
  }
  for (; i < s.length; i++) {
    const c = s[i];
    if (isDigit(c) || (hex && isHexLetter(c))) {
      saw = '0';
    } else if (c === '_') {
      if (saw !== '0') {
        return false;
      }
      saw = '_';
    } else if (saw === '_') {
      return false;
    } else {
      saw = '!';
    }
  }
  return saw !== '_';
}

/** Reads the mantissa (digits, one optional point, underscores) like Go's readFloat loop. */
function scanMantissa(cur: Cursor, hex: boolean): { digits: string; pointIndex: number } {
  let digits = '';
  let pointIndex = -1;
  for (; cur.i < cur.s.length; cur.i++) {
    const c = cur.s[cur.i] ?? '';
    if (c === '_') {
      cur.underscores = true;
    } else if (c === '.' && pointIndex < 0) {
      pointIndex = digits.length;
    } else if (isDigit(c) || (hex && isHexLetter(c))) {
      digits += c;
    } else {
      break;
    }
  }
  return { digits, pointIndex: pointIndex < 0 ? digits.length : pointIndex };
}

/**
 * Reads an exponent after its marker (`e` or `p`): optional sign, then at least one digit, then
 * digits and underscores. Returns `undefined` on a syntax error.
 */
function scanExponent(cur: Cursor): number | undefined {
  let sign = 1;
  const c = cur.s[cur.i];
  if (c === '+' || c === '-') {
    sign = c === '-' ? -1 : 1;
    cur.i++;
  }
  if (!isDigit(cur.s[cur.i])) {
    return undefined;
  }
  let e = 0;
  for (; cur.i < cur.s.length; cur.i++) {
    const d = cur.s[cur.i] ?? '';
    if (d === '_') {
      cur.underscores = true;
    } else if (isDigit(d)) {
      e = e < EXPONENT_CAP ? e * 10 + Number(d) : e;
    } else {
      break;
    }
  }
  return sign * e;
}

/** Reads the optional sign and `0x` prefix; returns whether the number is hexadecimal. */
function scanPrefix(cur: Cursor): boolean {
  const { s } = cur;
  if (s.startsWith('-') || s.startsWith('+')) {
    cur.i = 1;
  }
  const hex = cur.i + 2 < s.length && s[cur.i] === '0' && s[cur.i + 1]?.toLowerCase() === 'x';
  if (hex) {
    cur.i += 2;
  }
  return hex;
}

/** The exponent after the mantissa: 0 when absent (decimal), `undefined` on a syntax error. */
function scanOptionalExponent(cur: Cursor, hex: boolean): number | undefined {
  if (cur.s[cur.i]?.toLowerCase() === (hex ? 'p' : 'e')) {
    cur.i++;
    return scanExponent(cur);
  }
  return hex ? undefined : 0; // a hexadecimal mantissa needs a p exponent
}

/** Go's `readFloat`, requiring the whole string to be consumed (as `ParseFloat` does). */
function scanFloat(s: string): ScannedFloat | undefined {
  const cur: Cursor = { s, i: 0, underscores: false };
  const hex = scanPrefix(cur);
  const { digits, pointIndex } = scanMantissa(cur, hex);
  if (digits === '') {
    return undefined;
  }
  const exponent = scanOptionalExponent(cur, hex);
  if (exponent === undefined || cur.i !== s.length) {
    return undefined;
  }
  if (cur.underscores && !underscoreOK(s)) {
    return undefined;
  }
  return { negative: s.startsWith('-'), hex, digits, pointIndex, exponent };
}

/**
 * `mantissa × 2^exponent` rounded to the nearest float64, ties to even (denormals included), as
 * Go's atofHex does. Overflow gives Infinity.
 */
function scaleBinary(mantissa: bigint, exponent: number): number {
  if (mantissa === 0n) {
    return 0;
  }
  const bits = mantissa.toString(2).length;
  const lsb = Math.max(MIN_LSB_EXPONENT, bits - 1 + exponent - MANTISSA_BITS);
  if (exponent >= lsb) {
    return Number(mantissa) * 2 ** exponent; // at most 53 significant bits: exact
  }
  const shift = lsb - exponent;
  if (shift > bits + 1) {
    return 0; // below half of the smallest denormal
  }
  let q = mantissa >> BigInt(shift);
  const rest = mantissa - (q << BigInt(shift));
  const half = 1n << BigInt(shift - 1);
  if (rest > half || (rest === half && (q & 1n) === 1n)) {
    q += 1n;
  }
  return Number(q) * 2 ** lsb;
}

function convert(f: ScannedFloat): number {
  if (f.hex) {
    const fractionDigits = f.digits.length - f.pointIndex;
    return scaleBinary(BigInt(`0x${f.digits}`), f.exponent - 4 * fractionDigits);
  }
  // 0.DIGITS × 10^(pointIndex + exponent): JavaScript's correctly rounded decimal conversion.
  return Number(`0.${f.digits}e${f.pointIndex + f.exponent}`);
}

/**
 * Go's `strconv.ParseFloat(s, 64)`: the same accepted strings and the same float64 value.
 *
 * Accepts an optional sign; a decimal mantissa with an optional point (`.5`, `5.`) and `e`
 * exponent; a hexadecimal mantissa (`0x1.8p1`) whose `p` exponent is mandatory; `Inf`,
 * `Infinity` (optionally signed) and `NaN` in any case; underscores only between digits (`1_000`
 * and `0x_1p0` pass, as in Go; `1__0`, `_1`, `1_` fail).
 *
 * @returns the number (possibly `NaN`, `±Infinity` or `-0`), or `undefined` where Go returns an
 * error. Traps: no whitespace is trimmed (`" 3"` fails), `""` fails, `0x10` fails (no `p`
 * exponent), and a finite value too large for a float64 (`1e400`) fails because Go reports
 * ErrRange, whereas underflow (`4e-400`) quietly gives 0 as in Go.
 */
export function parseGoFloat(s: string): number | undefined {
  const special = SPECIAL.exec(s);
  if (special) {
    if (special[1] === undefined) {
      return Number.NaN;
    }
    return special[1] === '-' ? -Infinity : Infinity;
  }
  const scanned = scanFloat(s);
  if (!scanned) {
    return undefined;
  }
  const magnitude = convert(scanned);
  if (!Number.isFinite(magnitude)) {
    return undefined; // Go: ErrRange
  }
  return scanned.negative ? -magnitude : magnitude;
}
