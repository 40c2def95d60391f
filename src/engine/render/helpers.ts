// The template helpers of SPEC §5: Sprig-named, pure functions registered on an isolated
// Handlebars environment, and the contract between a helper's result and the renderer
// (a SafeString is YAML syntax; any other result is an exact value).
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import Handlebars from 'handlebars';
import { Document, visit } from 'yaml';
import { isMap } from '../shared/json-map.ts';

type HandlebarsEnv = typeof Handlebars;
type SafeString = Handlebars.SafeString;

/** Where a failing helper was called in the template, as Handlebars reports it. */
export interface HelperLocation {
  /** 1-based line of the template body. */
  line: number;
  /** 0-based column of the template body (Handlebars' convention). */
  column: number;
}

/**
 * A helper refused its input: wrong number of arguments, a value of the wrong kind, `required`
 * on an empty value, invalid base64, an oversized result.
 *
 * The message names the helper and shows its usage (`indent expects 2 arguments:
 * {{indent 4 text}}`), except for `required`, whose message is exactly the template's own.
 * Messages never quote an argument's value, so a Secret-backed parameter cannot leak through
 * them. `location` is set when Handlebars supplied one.
 */
export class RenderHelperError extends Error {
  override readonly name = 'RenderHelperError';
  readonly helper: string;
  readonly location: HelperLocation | undefined;

  constructor(helper: string, message: string, location?: HelperLocation) {
    super(message);
    this.helper = helper;
    this.location = location;
  }
}

/** Longest text `indent`, `nindent`, `replace`, `join` and `concat` may build (2 MiB of chars). */
export const MAX_HELPER_TEXT_LENGTH = 2 * 1024 * 1024;

/** Longest list `split` and `concat` may build: nested `concat`s would otherwise double a list
 *  at every level. */
export const MAX_HELPER_LIST_LENGTH = 100_000;

interface Kit {
  /** Wraps YAML text so the renderer emits it as syntax. */
  readonly raw: (text: string) => SafeString;
  /** Whether argument `index` arrived as a SafeString (every argument is unwrapped to text). */
  readonly wasRaw: (index: number) => boolean;
  /** Throws `<helper> <detail>: <usage>`. */
  readonly fail: (detail: string) => never;
  /** Throws exactly `message` (for `required`). */
  readonly refuse: (message: string) => never;
}

type Run = (args: readonly unknown[], kit: Kit) => unknown;

interface HelperSpec {
  readonly usage: string;
  readonly min: number;
  readonly max: number;
  readonly run: Run;
}

function exactly(count: number, usage: string, run: Run): HelperSpec {
  return { usage, min: count, max: count, run };
}

function atLeast(count: number, usage: string, run: Run): HelperSpec {
  return { usage, min: count, max: Number.POSITIVE_INFINITY, run };
}

// ---------------------------------------------------------------------------------------------
// Values

function kindOf(value: unknown): string {
  if (value === undefined || value === null) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a map' : `a ${typeof value}`;
}

/** Sprig's `empty`: undefined, null, "", 0, false, an empty list or an empty map. */
function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '' || value === 0 || value === false) {
    return true;
  }
  if (Array.isArray(value)) return value.length === 0;
  return isMap(value) && Object.keys(value).length === 0;
}

/** The text of a scalar; nothing is "". Lists and maps are refused. */
function textOf(value: unknown, kit: Kit): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === undefined || value === null) return '';
  return kit.fail(`expects text, got ${kindOf(value)}`);
}

function wholeNumber(value: unknown, kit: Kit, what: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d{1,15}$/.test(value)) return Number(value);
  return kit.fail(`expects ${what}, got ${kindOf(value)}`);
}

function ensureFits(length: number, kit: Kit): void {
  if (length > MAX_HELPER_TEXT_LENGTH) {
    kit.fail(`would produce more than ${MAX_HELPER_TEXT_LENGTH} characters`);
  }
}

function codePointCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** Structural equality of JSON values; undefined and null are both "nothing". */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((a === undefined || a === null) && (b === undefined || b === null)) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => sameValue(item, b[i]));
  }
  if (!isMap(a) || !isMap(b)) return false;
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length &&
    keys.every((key) => Object.hasOwn(b, key) && sameValue(a[key], b[key]))
  );
}

function compare(args: readonly unknown[], kit: Kit, holds: (order: number) => boolean): boolean {
  const [a, b] = args;
  if (typeof a === 'number' && typeof b === 'number') {
    return !Number.isNaN(a) && !Number.isNaN(b) && holds(a === b ? 0 : a < b ? -1 : 1);
  }
  if (typeof a === 'string' && typeof b === 'string') return holds(a === b ? 0 : a < b ? -1 : 1);
  return kit.fail(`cannot compare ${kindOf(a)} with ${kindOf(b)}`);
}

// ---------------------------------------------------------------------------------------------
// YAML and JSON text

/** Characters YAML 1.1 reads as line breaks, or YAML forbids unescaped, that JSON leaves raw. */
const YAML_UNSAFE = /[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/;
const YAML_UNSAFE_ALL = new RegExp(YAML_UNSAFE.source, 'g');

function escapeUnsafe(json: string): string {
  return json.replace(
    YAML_UNSAFE_ALL,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A JSON string literal, which is also a one-line YAML double-quoted scalar. */
function doubleQuoted(text: string): string {
  return escapeUnsafe(JSON.stringify(text));
}

/** Single-quoted YAML with `'` doubled. A text with anything JSON escapes besides `"` and the
 *  backslash (a line break, a tab, a control character, a lone surrogate), or that YAML cannot
 *  carry raw, is double-quoted instead: single quotes have no escapes and fold line breaks. */
function singleQuoted(text: string): string {
  const json = doubleQuoted(text);
  const plain = json === `"${text.replace(/["\\]/g, '\\$&')}"`;
  return plain ? `'${text.replaceAll("'", "''")}'` : json;
}

function jsonText(value: unknown, kit: Kit): string {
  const json = JSON.stringify(value ?? null, (_key, item: unknown) => {
    if (typeof item === 'number' && !Number.isFinite(item)) {
      kit.fail('cannot encode NaN or Infinity (JSON has no such numbers; toYaml has)');
    }
    return item;
  });
  return escapeUnsafe(json);
}

/** Whether a block scalar for `text` would need keep chomping (`|+`), whose trailing blank
 *  lines would swallow or lose the template's own line breaks. */
function needsKeepChomping(text: string): boolean {
  let start = text.length;
  while (start > 0 && ' \t\n'.includes(text.charAt(start - 1))) start--;
  const tail = text.slice(start);
  const firstBreak = tail.indexOf('\n');
  return firstBreak !== -1 && (tail === text || firstBreak !== tail.length - 1);
}

/** A string at the root is kept on one line so `key: {{toYaml s}}` works for any string; a
 *  block scalar there would also need an indentation indicator that `nindent` would falsify. */
function mustDoubleQuote(text: string, atRoot: boolean): boolean {
  return (
    (atRoot && /[\n\r]|^(?:%|---|\.\.\.)/.test(text)) ||
    needsKeepChomping(text) ||
    YAML_UNSAFE.test(text)
  );
}

const YAML_OUTPUT = { lineWidth: 0, doubleQuotedMinMultiLineLength: Number.MAX_SAFE_INTEGER };

/** Block YAML that reads back the same under YAML 1.2 and 1.1 (`compat` quotes `off`, `<<`,
 *  `2001-12-14`, `1_000`...), with no folding, no anchors and no trailing newline. */
function yamlText(value: unknown): string {
  const doc = new Document(value ?? null, { aliasDuplicateObjects: false, compat: 'yaml-1.1' });
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && mustDoubleQuote(node.value, node === doc.contents)) {
        node.type = 'QUOTE_DOUBLE';
      }
    },
  });
  // The characters escapeUnsafe replaces only occur inside the double-quoted scalars forced
  // above, where a \u escape is valid; yaml leaves them raw there.
  const text = escapeUnsafe(doc.toString(YAML_OUTPUT));
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

// ---------------------------------------------------------------------------------------------
// Helpers with more than a line of logic

function requireValue([message, value]: readonly unknown[], kit: Kit): unknown {
  return isEmpty(value) ? kit.refuse(textOf(message, kit)) : value;
}

function indentBy(prefix: string): Run {
  return ([count, value], kit) => {
    const spaces = wholeNumber(count, kit, 'a whole number of spaces');
    if (spaces < 0) return kit.fail('expects a whole number of spaces, got a negative number');
    const text = textOf(value, kit);
    const lines = text.split('\n');
    ensureFits(prefix.length + text.length + spaces * lines.length, kit);
    const pad = ' '.repeat(spaces);
    const indented = prefix + pad + lines.join(`\n${pad}`);
    return kit.wasRaw(1) ? kit.raw(indented) : indented;
  };
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decodeBase64([value]: readonly unknown[], kit: Kit): string {
  const text = textOf(value, kit).replace(/[\r\n]/g, '');
  if (!BASE64.test(text)) return kit.fail('expects standard base64 text with = padding');
  try {
    return UTF8.decode(Buffer.from(text, 'base64'));
  } catch {
    return kit.fail('decoded bytes that are not UTF-8 text');
  }
}

function replaceAll([from, to, value]: readonly unknown[], kit: Kit): string {
  const [old, next, text] = [textOf(from, kit), textOf(to, kit), textOf(value, kit)];
  // Go's strings.Replace with an empty `old` matches around every character.
  const parts = old === '' ? ['', ...Array.from(text), ''] : text.split(old);
  ensureFits(text.length + (parts.length - 1) * (next.length - old.length), kit);
  return parts.join(next);
}

function truncate([count, value]: readonly unknown[], kit: Kit): string {
  const n = wholeNumber(count, kit, 'a whole number of characters');
  const chars = Array.from(textOf(value, kit));
  return (n < 0 ? chars.slice(n) : chars.slice(0, n)).join('');
}

function joinList([separator, list]: readonly unknown[], kit: Kit): string {
  const sep = textOf(separator, kit);
  if (isMap(list)) return kit.fail('expects a list, got a map');
  const items = Array.isArray(list) ? list : [list];
  const texts = items
    .filter((item) => item !== undefined && item !== null)
    .map((item) =>
      typeof item === 'object' ? kit.fail('expects a list of scalars') : textOf(item, kit),
    );
  ensureFits(
    texts.reduce((sum, text) => sum + text.length + sep.length, 0),
    kit,
  );
  return texts.join(sep);
}

function ensureListFits(length: number, kit: Kit): void {
  if (length > MAX_HELPER_LIST_LENGTH) {
    kit.fail(`would produce a list of more than ${MAX_HELPER_LIST_LENGTH} items`);
  }
}

function splitText([separator, value]: readonly unknown[], kit: Kit): string[] {
  const [sep, text] = [textOf(separator, kit), textOf(value, kit)];
  const parts = sep === '' ? Array.from(text) : text.split(sep, MAX_HELPER_LIST_LENGTH + 1);
  ensureListFits(parts.length, kit);
  return parts;
}

function concatValues(args: readonly unknown[], kit: Kit): unknown {
  if (args.every((arg) => Array.isArray(arg))) {
    ensureListFits(
      args.reduce((sum: number, arg) => sum + (arg as unknown[]).length, 0),
      kit,
    );
    return args.flatMap((arg) => arg as unknown[]);
  }
  if (args.some((arg) => typeof arg === 'object' && arg !== null)) {
    return kit.fail('expects either lists only or scalars only');
  }
  const texts = args.map((arg) => textOf(arg, kit));
  ensureFits(
    texts.reduce((sum, text) => sum + text.length, 0),
    kit,
  );
  return texts.join('');
}

function lengthOf([value]: readonly unknown[], kit: Kit): number {
  if (typeof value === 'string') return codePointCount(value);
  if (Array.isArray(value)) return value.length;
  if (value === undefined || value === null) return 0;
  if (isMap(value)) return Object.keys(value).length;
  return kit.fail(`expects text, a list or a map, got ${kindOf(value)}`);
}

// ---------------------------------------------------------------------------------------------
// The table

const HELPERS = {
  default: exactly(2, '{{default "nginx" parameters.image}}', ([fallback, value]) =>
    isEmpty(value) ? fallback : value,
  ),
  required: exactly(2, '{{required "image is required" parameters.image}}', requireValue),
  quote: exactly(1, '{{quote value}}', ([value], kit) => kit.raw(doubleQuoted(textOf(value, kit)))),
  squote: exactly(1, '{{squote value}}', ([value], kit) =>
    kit.raw(singleQuoted(textOf(value, kit))),
  ),
  toJson: exactly(1, '{{toJson value}}', ([value], kit) => kit.raw(jsonText(value, kit))),
  toYaml: exactly(1, '{{toYaml value}}', ([value], kit) => kit.raw(yamlText(value))),
  indent: exactly(2, '{{indent 4 text}}', indentBy('')),
  nindent: exactly(2, '{{nindent 4 text}}', indentBy('\n')),
  b64enc: exactly(1, '{{b64enc text}}', ([value], kit) =>
    Buffer.from(textOf(value, kit), 'utf8').toString('base64'),
  ),
  b64dec: exactly(1, '{{b64dec text}}', decodeBase64),
  sha256: exactly(1, '{{sha256 text}}', ([value], kit) =>
    createHash('sha256').update(textOf(value, kit), 'utf8').digest('hex'),
  ),
  upper: exactly(1, '{{upper text}}', ([value], kit) => textOf(value, kit).toUpperCase()),
  lower: exactly(1, '{{lower text}}', ([value], kit) => textOf(value, kit).toLowerCase()),
  trim: exactly(1, '{{trim text}}', ([value], kit) => textOf(value, kit).trim()),
  replace: exactly(3, '{{replace "-" "_" text}}', replaceAll),
  trunc: exactly(2, '{{trunc 63 text}}', truncate),
  join: exactly(2, '{{join "," list}}', joinList),
  split: exactly(2, '{{split "," text}}', splitText),
  eq: exactly(2, '{{eq a b}}', ([a, b]) => sameValue(a, b)),
  ne: exactly(2, '{{ne a b}}', ([a, b]) => !sameValue(a, b)),
  lt: exactly(2, '{{lt a b}}', (args, kit) => compare(args, kit, (order) => order < 0)),
  le: exactly(2, '{{le a b}}', (args, kit) => compare(args, kit, (order) => order <= 0)),
  gt: exactly(2, '{{gt a b}}', (args, kit) => compare(args, kit, (order) => order > 0)),
  ge: exactly(2, '{{ge a b}}', (args, kit) => compare(args, kit, (order) => order >= 0)),
  and: atLeast(1, '{{and a b}}', (args) => args.every((arg) => !isEmpty(arg))),
  or: atLeast(1, '{{or a b}}', (args) => args.some((arg) => !isEmpty(arg))),
  not: exactly(1, '{{not value}}', ([value]) => isEmpty(value)),
  concat: atLeast(1, '{{concat a b}}', concatValues),
  len: exactly(1, '{{len value}}', lengthOf),
} satisfies Record<string, HelperSpec>;

/** The name of one of Stencil's helpers. */
export type HelperName = keyof typeof HELPERS;

/** Every helper `registerHelpers` installs, in the order SPEC §5 lists them. */
export const HELPER_NAMES: readonly HelperName[] = Object.freeze(
  Object.keys(HELPERS) as HelperName[],
);

/** How a helper is called: its usage line and how many arguments it takes. */
export interface HelperSignature {
  readonly usage: string;
  readonly minArgs: number;
  /** `Infinity` for the variadic `and`, `or` and `concat`. */
  readonly maxArgs: number;
}

/** Usage and arity of every helper, for static checks of a template before it runs. */
export const HELPER_SIGNATURES: Readonly<Record<HelperName, HelperSignature>> = Object.freeze(
  Object.fromEntries(
    HELPER_NAMES.map((name) => {
      const { usage, min, max } = HELPERS[name];
      return [name, Object.freeze({ usage, minArgs: min, maxArgs: max })];
    }),
  ) as Record<HelperName, HelperSignature>,
);

// ---------------------------------------------------------------------------------------------
// Registration

interface Call {
  block: boolean;
  named: boolean;
  location: HelperLocation | undefined;
}

function readCall(options: unknown): Call {
  const o = (typeof options === 'object' && options !== null ? options : {}) as {
    fn?: unknown;
    hash?: unknown;
    loc?: { start?: { line?: unknown; column?: unknown } };
  };
  const start = o.loc?.start;
  const location =
    typeof start?.line === 'number' && typeof start.column === 'number'
      ? { line: start.line, column: start.column }
      : undefined;
  const named = typeof o.hash === 'object' && o.hash !== null && Object.keys(o.hash).length > 0;
  return { block: typeof o.fn === 'function', named, location };
}

function arity(spec: HelperSpec): string {
  const plural = spec.min === 1 ? 'argument' : 'arguments';
  return spec.min === spec.max ? `${spec.min} ${plural}` : `at least ${spec.min} ${plural}`;
}

function checkCall(name: string, spec: HelperSpec, count: number, call: Call): void {
  const refuse = (detail: string): never => {
    throw new RenderHelperError(name, `${name} ${detail}: ${spec.usage}`, call.location);
  };
  if (call.block)
    refuse('is not a block helper; call it inside an expression such as {{#if (...)}}');
  if (call.named) refuse('takes no named arguments');
  if (count < spec.min || count > spec.max) refuse(`expects ${arity(spec)}`);
}

function bind(hb: HandlebarsEnv, name: HelperName): Handlebars.HelperDelegate {
  const spec: HelperSpec = HELPERS[name];
  return (...received: unknown[]): unknown => {
    const call = readCall(received.pop());
    checkCall(name, spec, received.length, call);
    const rawAt = received.map((arg) => arg instanceof hb.SafeString);
    const args = received.map((arg) => (arg instanceof hb.SafeString ? arg.toString() : arg));
    const kit: Kit = {
      raw: (text) => new hb.SafeString(text),
      wasRaw: (index) => rawAt[index] === true,
      fail: (detail) => {
        throw new RenderHelperError(name, `${name} ${detail}: ${spec.usage}`, call.location);
      },
      refuse: (message) => {
        throw new RenderHelperError(name, message, call.location);
      },
    };
    return spec.run(args, kit);
  };
}

/**
 * Registers Stencil's helpers (SPEC §5, listed in {@link HELPER_NAMES}) on `hb`, and removes
 * the built-in `log` helper (it writes values, possibly Secrets, to the console).
 *
 * Contract:
 * - `hb` must be an isolated environment from `Handlebars.create()`; the global one is refused.
 * - Every helper is pure, strips Handlebars' trailing `options` argument, refuses block use and
 *   named (hash) arguments, and throws {@link RenderHelperError} on a wrong argument count.
 * - A SafeString argument is read as its text. `toYaml`, `toJson`, `quote` and `squote` return a
 *   `hb.SafeString` whose text is valid YAML that parses back to exactly the input (quote and
 *   squote stringify scalars first: `quote 3` is `"3"`); `indent` and `nindent` return a
 *   SafeString only when given one; every other helper returns a plain value (string, number,
 *   boolean or list), which the renderer inserts as exactly that value. So `default` and
 *   `required` unwrap a SafeString argument to plain text.
 * - "Empty" is Sprig's rule: undefined, null, "", 0, false, [] and {}. Note that `required`
 *   therefore also rejects 0 and false.
 * - The YAML they produce reads back the same with the `yaml` package under YAML 1.1 (what the
 *   renderer uses) and 1.2: words such as `off`, `yes`, `<<` or `2001-12-14` come out quoted.
 * - Traps: `toYaml` output has no trailing newline, and a map or list must be laid out with
 *   `nindent` (a string always comes out on one line); `toJson` refuses NaN and Infinity;
 *   `b64enc` and `sha256` encode a lone surrogate as U+FFFD.
 */
export function registerHelpers(hb: HandlebarsEnv): void {
  if (hb === Handlebars) {
    throw new Error('registerHelpers needs an isolated environment from Handlebars.create()');
  }
  for (const name of HELPER_NAMES) hb.registerHelper(name, bind(hb, name));
  hb.unregisterHelper('log');
}
