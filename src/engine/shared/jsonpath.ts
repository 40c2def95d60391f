// kubectl-style JSONPath for objectFieldRef (SPEC §3): our own parser and filter evaluator around
// jsonpath-plus, which navigates one step at a time with script evaluation disabled.
import { JSONPath } from 'jsonpath-plus';
import { InstanceReason } from '../../api/condition.ts';
import { failure, success, type Outcome, type Problem } from './problem.ts';
import { isMap } from './json-map.ts';

/** Longest accepted path, in UTF-16 code units. */
export const MAX_JSONPATH_LENGTH = 1024;
/** Most values a path may select. */
export const MAX_JSONPATH_MATCHES = 10_000;
/** Most values any intermediate step may hold (bounds the work of `..` on a large LIST). */
export const MAX_JSONPATH_INTERMEDIATE = 100_000;
/** jsonpath-plus's global path cache is emptied once it holds more entries than this. */
export const MAX_LIBRARY_CACHE_ENTRIES = 1_000;
/** Largest index or slice bound accepted in `[...]`. */
const MAX_INDEX = 2 ** 31 - 1;

type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=';
type Literal = string | number | boolean | null;

/** One step of a path relative to a filter's item: `@.a['b'][0]`. */
type RelativeStep = { kind: 'child'; key: string } | { kind: 'index'; index: number };

interface Filter {
  path: RelativeStep[];
  /** Absent for an existence test `[?(@.a)]`. */
  comparison?: { op: CompareOp; literal: Literal };
}

type Step =
  | { kind: 'child'; key: string }
  | { kind: 'wildcard' }
  | { kind: 'descendant' }
  | { kind: 'index'; index: number }
  | { kind: 'slice'; start?: number; end?: number; step?: number }
  | { kind: 'filter'; filter: Filter };

/** A syntax error at a position of the path (0-based). */
class PathError extends Error {
  readonly position: number;
  constructor(message: string, position: number) {
    super(message);
    this.position = position;
  }
}

interface Parser {
  text: string;
  pos: number;
}

const FILTER_HELP =
  'filters support only [?(@.field)] (the field exists) and [?(@.field OP literal)] with OP one ' +
  'of ==, !=, <, <=, >, >= and a quoted string, number, true, false or null';

/** Characters that end an unquoted field name; `.` and `[` end it normally. */
const RESERVED = new Set([...']{}()\'",?@=!<>&|*', ' ', '\t', '\n', '\r']);

function fail(p: Parser, detail: string, at: number = p.pos): never {
  throw new PathError(detail, at);
}

function failFilter(p: Parser): never {
  const c = p.text[p.pos];
  const found = c === undefined ? 'the end of the path' : JSON.stringify(c);
  return fail(p, `unsupported filter syntax: unexpected ${found}; ${FILTER_HELP}`);
}

function rejectCharacter(p: Parser, c: string): never {
  if (c === '{' || c === '}') {
    return fail(
      p,
      'braces are kubectl template syntax; give the bare path (the operator wraps it)',
    );
  }
  if (c === '(' || c === ')') {
    return fail(p, 'function calls and script expressions are not supported');
  }
  if (c.trim() === '') {
    return fail(p, 'unexpected whitespace');
  }
  return fail(p, `unexpected ${JSON.stringify(c)}; quote unusual keys as ['key']`);
}

/** Reads an unquoted name: up to `.`, `[`, a reserved character or the end; `\x` means `x`. */
function readName(p: Parser): string {
  let name = '';
  while (p.pos < p.text.length) {
    const c = p.text[p.pos] ?? '';
    if (c === '.' || c === '[' || RESERVED.has(c)) {
      break;
    }
    if (c === '\\') {
      p.pos++;
      if (p.pos >= p.text.length) {
        fail(p, 'a backslash must be followed by the character it escapes');
      }
    }
    name += p.text[p.pos] ?? '';
    p.pos++;
  }
  return name;
}

/** Reads `'...'` or `"..."`; a backslash takes the next character literally. */
function readQuoted(p: Parser): string {
  const quote = p.text[p.pos];
  const start = p.pos;
  p.pos++;
  let value = '';
  for (;;) {
    let c = p.text[p.pos];
    if (c === '\\') {
      p.pos++;
      c = p.text[p.pos];
    } else if (c === quote) {
      p.pos++;
      return value;
    }
    if (c === undefined) {
      return fail(p, 'unterminated quoted string', start);
    }
    value += c;
    p.pos++;
  }
}

/** Reads an optional integer (`-` allowed); `undefined` when there are no digits. */
function readInt(p: Parser): number | undefined {
  const match = /-?\d+/y;
  match.lastIndex = p.pos;
  const found = match.exec(p.text);
  if (!found) {
    return p.text[p.pos] === '-' ? fail(p, 'expected digits after "-"') : undefined;
  }
  const value = Number(found[0]);
  if (Math.abs(value) > MAX_INDEX) {
    fail(p, `index ${found[0]} is out of range`);
  }
  p.pos += found[0].length;
  return value;
}

function expectClose(p: Parser): void {
  const c = p.text[p.pos];
  if (c === ']') {
    p.pos++;
    return;
  }
  if (c === ',') {
    fail(p, "unions such as [0,1] or ['a','b'] are not supported");
  }
  fail(p, c === undefined ? 'missing "]"' : `expected "]", found ${JSON.stringify(c)}`);
}

function parseIndexOrSlice(p: Parser): Step {
  const parts: (number | undefined)[] = [readInt(p)];
  while (p.text[p.pos] === ':' && parts.length < 3) {
    p.pos++;
    parts.push(readInt(p));
  }
  expectClose(p);
  const [start, end, step] = parts;
  if (parts.length === 1) {
    return { kind: 'index', index: start ?? 0 };
  }
  if (step !== undefined && step <= 0) {
    fail(p, 'a slice step must be a positive integer', p.pos - 1);
  }
  return { kind: 'slice', start, end, step };
}

function skipSpaces(p: Parser): void {
  while (p.text[p.pos] === ' ' || p.text[p.pos] === '\t') {
    p.pos++;
  }
}

/** `@` followed by `.name`, `['key']` or `[n]` steps. */
function parseRelativePath(p: Parser): RelativeStep[] {
  if (p.text[p.pos] !== '@') {
    failFilter(p);
  }
  p.pos++;
  const steps: RelativeStep[] = [];
  for (;;) {
    const c = p.text[p.pos];
    if (c === '.') {
      p.pos++;
      const key = readName(p);
      if (key === '') {
        failFilter(p);
      }
      steps.push({ kind: 'child', key });
    } else if (c === '[') {
      p.pos++;
      steps.push(parseRelativeBracket(p));
    } else {
      return steps;
    }
  }
}

function parseRelativeBracket(p: Parser): RelativeStep {
  const c = p.text[p.pos];
  let step: RelativeStep;
  if (c === '"' || c === "'") {
    step = { kind: 'child', key: readQuoted(p) };
  } else {
    const index = readInt(p);
    if (index === undefined) {
      return failFilter(p);
    }
    step = { kind: 'index', index };
  }
  if (p.text[p.pos] !== ']') {
    failFilter(p);
  }
  p.pos++;
  return step;
}

const OPERATORS: readonly CompareOp[] = ['==', '!=', '<=', '>=', '<', '>'];

function readOperator(p: Parser): CompareOp {
  const op = OPERATORS.find((candidate) => p.text.startsWith(candidate, p.pos));
  if (op === undefined) {
    return failFilter(p);
  }
  p.pos += op.length;
  return op;
}

const NUMBER_LITERAL = /-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
const KEYWORD_LITERAL = /(?:true|false|null)(?![\w$])/y;

function readLiteral(p: Parser): Literal {
  const c = p.text[p.pos];
  if (c === '"' || c === "'") {
    return readQuoted(p);
  }
  KEYWORD_LITERAL.lastIndex = p.pos;
  const keyword = KEYWORD_LITERAL.exec(p.text);
  if (keyword) {
    p.pos += keyword[0].length;
    return keyword[0] === 'null' ? null : keyword[0] === 'true';
  }
  NUMBER_LITERAL.lastIndex = p.pos;
  const number = NUMBER_LITERAL.exec(p.text);
  if (number && Number.isFinite(Number(number[0]))) {
    p.pos += number[0].length;
    return Number(number[0]);
  }
  return failFilter(p);
}

/** `?(` ... `)]`, with `p.pos` on the `?`. */
function parseFilter(p: Parser): Step {
  p.pos += 2;
  skipSpaces(p);
  const path = parseRelativePath(p);
  skipSpaces(p);
  let comparison: Filter['comparison'];
  if (p.text[p.pos] !== ')') {
    const op = readOperator(p);
    skipSpaces(p);
    comparison = { op, literal: readLiteral(p) };
    skipSpaces(p);
  }
  if (p.text[p.pos] !== ')') {
    failFilter(p);
  }
  p.pos++;
  expectClose(p);
  return { kind: 'filter', filter: { path, comparison } };
}

/** `[...]`, with `p.pos` on the `[`. */
function parseBracket(p: Parser): Step {
  p.pos++;
  const c = p.text[p.pos];
  if (c === "'" || c === '"') {
    const key = readQuoted(p);
    expectClose(p);
    return { kind: 'child', key };
  }
  if (c === '*') {
    p.pos++;
    expectClose(p);
    return { kind: 'wildcard' };
  }
  if (c === '?' && p.text[p.pos + 1] === '(') {
    return parseFilter(p);
  }
  if (c === '(') {
    fail(p, 'script expressions [(...)] are not supported');
  }
  if (c !== undefined && /[-\d:]/.test(c)) {
    return parseIndexOrSlice(p);
  }
  return fail(p, "unsupported selector: use [n], [start:end:step], [*], ['key'] or [?(...)]");
}

/** `.name` or `.*`, with `p.pos` after the dot. */
function parseDotted(p: Parser): Step {
  if (p.text[p.pos] === '*') {
    p.pos++;
    return { kind: 'wildcard' };
  }
  const key = readName(p);
  const stop = p.text[p.pos];
  if (stop !== undefined && RESERVED.has(stop)) {
    rejectCharacter(p, stop);
  }
  if (key === '') {
    fail(p, 'expected a field name after "."');
  }
  return { kind: 'child', key };
}

/** The step after `..`: a name, `*` or a bracket. */
function parseAfterDescent(p: Parser): Step {
  const c = p.text[p.pos];
  if (c === '[') {
    return parseBracket(p);
  }
  if (c === undefined || c === '.') {
    fail(p, '".." must be followed by a field name, * or [...]');
  }
  return parseDotted(p);
}

function parseSegment(p: Parser, first: boolean): Step[] {
  const c = p.text[p.pos];
  if (c === '[') {
    return [parseBracket(p)];
  }
  if (c !== '.') {
    return rejectCharacter(p, c ?? '');
  }
  if (p.text[p.pos + 1] === '.') {
    p.pos += 2;
    return [{ kind: 'descendant' }, parseAfterDescent(p)];
  }
  p.pos++;
  if (first && p.pos === p.text.length) {
    return []; // "." alone: the whole object
  }
  if (first && p.text[p.pos] === '[') {
    return [parseBracket(p)]; // ".[0]", ".['a.b']"
  }
  return [parseDotted(p)];
}

function parsePath(text: string): Step[] {
  const p: Parser = { text, pos: 0 };
  const steps: Step[] = [];
  while (p.pos < text.length) {
    steps.push(...parseSegment(p, p.pos === 0));
  }
  return steps;
}

// ---- evaluation ----

/** Keys jsonpath-plus resolves literally when written as ['`key']; others are looked up here. */
const LIBRARY_SAFE_KEY = /^[\w\-./:]*$/;

type JsonMap = Record<string, unknown>;

function isContainer(value: unknown): value is JsonMap | unknown[] {
  return typeof value === 'object' && value !== null;
}

/** One jsonpath-plus query; `path` is always built by this module, never user text. */
function query(path: string, json: JsonMap | unknown[]): unknown[] {
  const found = JSONPath<unknown>({ path, json, eval: false, wrap: true, resultType: 'value' });
  return Array.isArray(found) ? found : [];
}

function childOf(node: JsonMap, key: string): unknown[] {
  if (LIBRARY_SAFE_KEY.test(key)) {
    return query(`$['\`${key}']`, node); // the backquote: own property only, no special meaning
  }
  return Object.hasOwn(node, key) ? [node[key]] : [];
}

function indexOf(node: unknown[], index: number): unknown[] {
  if (index >= 0) {
    return query(`$[${index}]`, node);
  }
  return query(index === -1 ? '$[-1:]' : `$[${index}:${index + 1}]`, node);
}

function sliceOf(node: unknown[], start?: number, end?: number, step?: number): unknown[] {
  if (end === 0) {
    return []; // jsonpath-plus reads an explicit end of 0 as "to the end"
  }
  const bounds = `${start ?? ''}:${end ?? ''}${step === undefined ? '' : `:${step}`}`;
  return query(`$[${bounds}]`, node);
}

/** Follows a filter's relative path through own properties and in-range indices only. */
function follow(path: RelativeStep[], item: unknown): { found: boolean; value?: unknown } {
  let current = item;
  for (const step of path) {
    if (step.kind === 'child') {
      if (!isMap(current) || !Object.hasOwn(current, step.key)) {
        return { found: false };
      }
      current = current[step.key];
    } else {
      const index =
        Array.isArray(current) && step.index < 0 ? current.length + step.index : step.index;
      if (!Array.isArray(current) || index < 0 || index >= current.length) {
        return { found: false };
      }
      current = current[index] as unknown;
    }
  }
  return { found: true, value: current };
}

/** Orders strings by code point, as Go compares UTF-8 bytes (not by UTF-16 unit). */
function compareStrings(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) ?? 0);
  const y = Array.from(b, (c) => c.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) {
      return d;
    }
  }
  return x.length - y.length;
}

function order(left: unknown, right: Literal): number | undefined {
  if (typeof left === 'number' && typeof right === 'number') {
    return left - right;
  }
  if (typeof left === 'string' && typeof right === 'string') {
    return compareStrings(left, right);
  }
  return undefined;
}

function compare(left: unknown, op: CompareOp, right: Literal): boolean {
  if (isContainer(left)) {
    return false;
  }
  if (op === '==' || op === '!=') {
    return (left === right) === (op === '==');
  }
  const d = order(left, right);
  if (d === undefined || Number.isNaN(d)) {
    return false;
  }
  return { '<': d < 0, '<=': d <= 0, '>': d > 0, '>=': d >= 0 }[op];
}

function matches(filter: Filter, item: unknown): boolean {
  const target = follow(filter.path, item);
  if (!target.found) {
    return false;
  }
  const { comparison } = filter;
  return comparison === undefined || compare(target.value, comparison.op, comparison.literal);
}

function applyStep(step: Step, node: unknown): unknown[] {
  switch (step.kind) {
    case 'child':
      return isMap(node) ? childOf(node, step.key) : [];
    case 'wildcard':
      return isContainer(node) ? query('$[*]', node) : [];
    case 'descendant':
      return isContainer(node) ? query('$..', node) : [];
    case 'index':
      return Array.isArray(node) ? indexOf(node, step.index) : [];
    case 'slice':
      return Array.isArray(node) ? sliceOf(node, step.start, step.end, step.step) : [];
    case 'filter':
      return isContainer(node) ? query('$[*]', node).filter((v) => matches(step.filter, v)) : [];
  }
}

function problem(message: string): Problem {
  return { path: '', reason: InstanceReason.ParameterResolutionFailed, message };
}

function run(steps: Step[], root: unknown): Outcome<unknown[]> {
  let nodes: unknown[] = [root];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const node of nodes) {
      for (const value of applyStep(step, node)) {
        next.push(value);
      }
      if (next.length > MAX_JSONPATH_INTERMEDIATE) {
        return failure([
          problem(`JSONPath visits more than ${MAX_JSONPATH_INTERMEDIATE} values; narrow it`),
        ]);
      }
    }
    nodes = next;
  }
  if (nodes.length > MAX_JSONPATH_MATCHES) {
    return failure([problem(`JSONPath matched more than ${MAX_JSONPATH_MATCHES} values`)]);
  }
  return success(nodes);
}

/** Checks that need no parsing; `undefined` when the path may be parsed. */
function precheck(path: string): string | undefined {
  if (path.length > MAX_JSONPATH_LENGTH) {
    return `JSONPath is ${path.length} characters long; the limit is ${MAX_JSONPATH_LENGTH}`;
  }
  if (path.trimStart().startsWith('{')) {
    return (
      'JSONPath must not be wrapped in {}: give .status.podIP, not {.status.podIP}; kubectl ' +
      'templates ({range}...{end}, several {} blocks, literal text) are not supported'
    );
  }
  if (!path.startsWith('.')) {
    const shown = JSON.stringify(Array.from(path).slice(0, 40).join(''));
    return `JSONPath must start with "." (kubectl style, e.g. .status.podIP), got ${shown}`;
  }
  return undefined;
}

/** Forgets jsonpath-plus's parsed paths once there are many (it never evicts on its own). */
function boundLibraryCache(): void {
  const cache = JSONPath.cache as Record<string, unknown>;
  if (Object.keys(cache).length > MAX_LIBRARY_CACHE_ENTRIES) {
    JSONPath.cache = {};
  }
}

function parse(path: string): Outcome<Step[]> {
  try {
    return success(parsePath(path));
  } catch (error) {
    if (!(error instanceof PathError)) {
      throw error;
    }
    const near = JSON.stringify(Array.from(path.slice(error.position)).slice(0, 20).join(''));
    const where = `at character ${error.position + 1}${near === '""' ? '' : ` (near ${near})`}`;
    return failure([problem(`invalid JSONPath ${where}: ${error.message}`)]);
  }
}

/**
 * Evaluates a kubectl-style JSONPath (leading dot, no braces: `.status.podIP`) against `root`
 * and returns every match in document order; the caller applies GET (one value) or LIST (a list)
 * semantics and treats `[]` as "matched nothing".
 *
 * Supported: `.a.b`, `.*`, `[*]`, `[0]`, `[-1]` (from the end), `[1:3]` and `[::2]` (clamped like
 * Python), `['x.y']` / `["x.y"]`, escaped dots (`.labels.app\.kubernetes\.io/name`), recursive
 * descent `..name` (the node itself, then its descendants depth-first, keys in document order),
 * `.` alone (the whole object), and filters over a list's items or a map's values:
 * `[?(@.a.b)]` (the field exists, whatever its value) and `[?(@.a.b OP literal)]` with
 * `== != < <= > >=` and a quoted string, number, `true`, `false` or `null`.
 *
 * Semantics (kubectl's where it has one): an item lacking the field, or whose field is a list or
 * map, is skipped by a filter (even for `!=`); `==`/`!=` compare strictly, without type
 * conversion (`"80"` is not `80`); `<`, `>`, `<=`, `>=` compare numbers with numbers and strings
 * with strings (by code point), other pairs do not match. Names match own properties only
 * (`constructor`, `__proto__`, `length` of a string or list never match); indices and slices
 * apply only to lists, names only to maps; an index out of range selects nothing.
 *
 * Fails (one problem, reason `ParameterResolutionFailed`, empty path: the caller sets it) on a
 * path over 1024 characters, not starting with `.`, with braces, kubectl `range`/`end`, unions,
 * script expressions `[(...)]`, any filter beyond the subset above (`&&`, calls, `@.a.b()`), a
 * slice step ≤ 0, more than 10000 matches, or more than 100000 values at any step.
 *
 * Safety: user text is parsed here and never evaluated as code; jsonpath-plus runs with
 * `eval: false` on paths this module builds. Its global `JSONPath.cache` (unbounded, keyed by
 * path) is emptied whenever it exceeds 1000 entries. Results are the objects inside `root`, not
 * copies: do not mutate them.
 */
export function evaluateJsonPath(path: string, root: unknown): Outcome<unknown[]> {
  const rejected = precheck(path);
  if (rejected !== undefined) {
    return failure([problem(rejected)]);
  }
  const steps = parse(path);
  if (!steps.ok) {
    return steps;
  }
  try {
    return run(steps.value, root);
  } finally {
    boundLibraryCache();
  }
}
