// Renders a Template body: an isolated Handlebars environment with Stencil's helpers, compiled
// once per body (cached by content hash), executed with a step budget, and turned into YAML
// documents in which consumer values can never add, remove or restructure keys (see
// docs/adr/0002-safe-interpolation.md for how the value markers work, and
// docs/adr/0011-render-helper-regions.md for the YAML text of helpers).
import { createHash } from 'node:crypto';
import Handlebars from 'handlebars';
import {
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseAllDocuments,
  visit,
  type Document,
  type Scalar,
  type YAMLSeq,
} from 'yaml';
import { InstanceReason } from '../../api/condition.ts';
import type { JsonValue, KubeObject } from '../../api/object-meta.ts';
import { MAX_RENDERED_BYTES, MAX_RESOURCES } from '../../api/well-known.ts';
import { HELPER_NAMES, registerHelpers, RenderHelperError } from './helpers.ts';
import {
  OBSERVED_HELPER,
  observedKey,
  observedValue,
  type ObservedCall,
  type ObservedInput,
  type ObservedLookup,
} from '../health/observed.ts';
import {
  checkRegions,
  extractRegions,
  markRegion,
  regionAt,
  regionMarkup,
  RESERVED,
  type HelperRegion,
  type RegionSpan,
} from './helper-regions.ts';
import { failure, success, type Outcome, type Problem } from '../shared/problem.ts';
import { MIN_SUBSTRING_LENGTH, type TaintedTexts } from '../redaction/redaction.ts';
import { Taint } from '../redaction/taint.ts';
import { TemplateChecker, parseErrorProblem, position } from './template-syntax.ts';
import { isMap } from '../shared/json-map.ts';
import { KUBERNETES_YAML } from '../shared/kube-yaml.ts';

/** The render context of SPEC §5. */
export interface RenderContext {
  parameters: Record<string, JsonValue>;
  instance: {
    name: string;
    namespace: string;
    uid: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
  };
  template: { name: string; namespace: string; generation: number };
}

export interface RenderedDocument {
  /** 0-based index among the non-empty documents of the output. */
  index: number;
  /** 1-based line of the rendered output where the document starts. */
  line: number;
  /** 0-based offset in the rendered output where the document starts. */
  offset: number;
  object: KubeObject;
  /** What the object read with `observed` (calls inside its document), each once. */
  observed: ObservedInput[];
  /**
   * Where the object's scalars that came from a `{{ }}` came from, in document order: the
   * Template position and the parameter, so a schema problem at a field can name them.
   */
  origins: ValueOrigin[];
}

/** The `{{ }}` that produced (part of) one scalar of a rendered object. */
export interface ValueOrigin {
  /** JSON pointer of the scalar in the object (`/spec/replicas`). */
  pointer: string;
  /** `line 7, column 13` of the Template body. */
  at: string;
  /** The parameter the `{{ }}` reads (`parameters.x` itself, or among a helper's arguments). */
  parameter?: string;
  /**
   * The parameter's value is the whole field, unconverted: a bare `{{parameters.x}}` that is the
   * entire scalar, so the field's type is the parameter's declared type.
   */
  placed: boolean;
}

/** What an inserted value came from (parallel to RenderState.values). */
interface InsertionSource {
  at: string;
  parameter?: string;
  bare: boolean;
}

/** Upper bound on block iterations, helper calls and value insertions in one render. */
export const MAX_RENDER_STEPS = 200_000;
/**
 * Upper bound on the characters helpers take and produce in one render: bounds the CPU time of
 * helper calls whose results are never emitted (`{{#if (indent 1 big)}}` in a loop).
 */
export const MAX_HELPER_WORK = 256 * 1024 * 1024;
/**
 * The running size estimate counts a helper's YAML text both where it is inserted and in the
 * loop body that contains it, so it is at most twice the final size: aborting past twice the
 * limit never refuses a render whose output would fit.
 */
const RUNNING_LIMIT = 2 * MAX_RENDERED_BYTES;

const OUT_HELPER = '__stencil_out';
const MARK_OPEN = '\uE000';
const MARK_CLOSE = '\uE001';
const MARKER = /\uE000(\d+)\uE001/g;
/**
 * Attribution marks: put in front of the output of every `{{ }}` that calls `observed`, and
 * taken out before the YAML is parsed, they tell which document each call landed in (through
 * loops and helpers, which a look at the template text cannot). Region markers (helper YAML)
 * use U+E002–U+E004; see helper-regions.ts, which lists every reserved character.
 */
const ATTRIBUTION_OPEN = '\uE005';
const ATTRIBUTION_CLOSE = '\uE006';
const ATTRIBUTION = /\uE005(\d+)\uE006/g;
const RESERVED_MESSAGE = 'a value contains the reserved characters U+E000-U+E006';
/** The render's bookkeeping lives in the Handlebars data frame under this key (see the checker). */
const STATE_KEY = 'stencil';

interface RenderState {
  values: unknown[];
  /** Per value: the `{{ }}` that inserted it. */
  sources: InsertionSource[];
  /** Helper YAML inserted as text, by region id (see helper-regions.ts). */
  regions: HelperRegion[];
  /** Characters of region markers in the text so far: not output, so not counted as size. */
  markup: number;
  steps: number;
  /** Characters of the inserted values (their markers stand in the text until the end). */
  valueBytes: number;
  /** Output size estimate, checked while rendering so a runaway render stops early. */
  estimate: number;
  /** One entry per running `each` body: output of nested `each` blocks already counted. */
  nested: number[];
  /** Characters taken and produced by helpers. */
  work: number;
  /** The live producers `observed` reads (none in a dry run). */
  observe: ObservedLookup;
  /** The outcome of each `observed` read, by observedKey. */
  outcomes: Map<string, ObservedInput['state']>;
  /** Per attribution mark (in output order): the ids of the `observed` calls of its `{{ }}`. */
  attributions: number[][];
  /** What derives from Secret data (helpers propagate it). */
  taint: Taint;
}

class RenderLimitError extends Error {}

function step(state: RenderState): void {
  if (++state.steps > MAX_RENDER_STEPS) {
    throw new RenderLimitError(
      `render exceeded ${MAX_RENDER_STEPS} steps (loop iterations, helper calls, insertions)`,
    );
  }
}

function grow(state: RenderState, characters: number): void {
  state.estimate += characters;
  if (state.estimate > RUNNING_LIMIT) {
    throw new RenderLimitError(
      `rendered output exceeds the limit of ${MAX_RENDERED_BYTES} bytes (2 MiB); stopped while rendering`,
    );
  }
}

function charge(state: RenderState, values: readonly unknown[]): void {
  for (const value of values) {
    if (typeof value === 'string') state.work += value.length;
    else if (Array.isArray(value)) state.work += value.length;
    else if (value instanceof Handlebars.SafeString) state.work += value.toString().length;
  }
  if (state.work > MAX_HELPER_WORK) {
    throw new RenderLimitError(
      `helpers processed more than ${MAX_HELPER_WORK} characters; the template does too much work`,
    );
  }
}

function stateOf(options: hbs.AST.Node | { data?: Record<string, unknown> }): RenderState {
  const state = (options as { data?: Record<string, unknown> }).data?.[STATE_KEY];
  if (!state) throw new Error('render state missing');
  return state as RenderState;
}

/** Counts what one `each` body (or its `else`) adds, net of nested `each` output. */
function counted(
  state: RenderState,
  body: Handlebars.TemplateDelegate,
): Handlebars.TemplateDelegate {
  return (context: unknown, opts?: Handlebars.RuntimeOptions) => {
    step(state);
    state.nested.push(0);
    const markup = state.markup;
    const out = body(context, opts);
    const nested = state.nested.pop() ?? 0;
    grow(state, out.length - (state.markup - markup) - nested);
    return out;
  };
}

/**
 * Wraps a helper so its calls count as steps, its arguments and result as work, and its result
 * as derived from Secret data when an argument was.
 */
function metered(helper: Handlebars.HelperDelegate): Handlebars.HelperDelegate {
  return function (this: unknown, ...args: unknown[]): unknown {
    const state = stateOf(args[args.length - 1] as Handlebars.HelperOptions);
    step(state);
    charge(state, args);
    const result = (helper as (...a: unknown[]) => unknown).apply(this, args);
    charge(state, [result]);
    state.taint.propagate(args.slice(0, -1), result);
    return result;
  };
}

/** What the compiler's `nameLookup` returns: fragments of the generated JavaScript. */
type CodeFragments = unknown[];

interface JavaScriptCompiler {
  nameLookup(parent: unknown, name: string, type: string): CodeFragments;
}

/**
 * Texts have no properties in a template: a path into one (`parameters.pw.length`,
 * `parameters.pw.[0]`, `{{#with parameters.pw}}{{this.[3]}}`) and `lookup` of one find nothing.
 * Provenance follows values through helpers; a property read of a text would hand the template
 * a Secret's value one untracked character (or its length) at a time. Done in the compiled
 * code, through the compiler's public `nameLookup` hook: the runtime offers no other.
 */
function withoutTextProperties(hb: typeof Handlebars): void {
  const env = hb as unknown as { JavaScriptCompiler: new () => JavaScriptCompiler };
  const Base = env.JavaScriptCompiler;
  class TextlessCompiler extends Base {
    override nameLookup(parent: unknown, name: string, type: string): CodeFragments {
      const lookup = super.nameLookup(parent, name, type);
      if (type !== 'context' && type !== 'data') return lookup;
      // Handlebars itself evaluates `parent` twice (`parent != null ? lookup : parent`).
      return ['(typeof ', parent, ' === "string" ? undefined : ', lookup, ')'];
    }
  }
  // Block bodies are compiled by `new this.compiler()`: they must get this compiler too.
  (TextlessCompiler.prototype as unknown as { compiler: unknown }).compiler = TextlessCompiler;
  env.JavaScriptCompiler = TextlessCompiler;
  const lookup = hb.helpers.lookup as (...args: unknown[]) => unknown;
  hb.registerHelper('lookup', function (this: unknown, ...args: unknown[]) {
    return typeof args[0] === 'string' ? undefined : lookup.apply(this, args);
  });
}

function createEnvironment(): typeof Handlebars {
  const hb = Handlebars.create();
  registerHelpers(hb);
  withoutTextProperties(hb);
  hb.unregisterHelper('log');
  for (const name of HELPER_NAMES) {
    hb.registerHelper(name, metered(hb.helpers[name] as Handlebars.HelperDelegate));
  }
  const builtinEach = hb.helpers.each as Handlebars.HelperDelegate;
  hb.registerHelper('each', function (this: unknown, ...args: unknown[]) {
    const options = args[args.length - 1] as Handlebars.HelperOptions;
    const state = stateOf(options);
    options.fn = counted(state, options.fn);
    options.inverse = counted(state, options.inverse);
    const markup = state.markup;
    const out = (builtinEach as (...a: unknown[]) => string).apply(this, args);
    const enclosing = state.nested.length - 1;
    if (enclosing >= 0) state.nested[enclosing]! += out.length - (state.markup - markup);
    return out;
  });
  hb.registerHelper(
    OBSERVED_HELPER,
    metered(function (this: unknown, ...args: unknown[]): unknown {
      const state = stateOf(args[4] as Handlebars.HelperOptions);
      const [apiVersion, kind, name, jsonPath] = args as [string, string, string, string];
      const key = observedKey({ apiVersion, kind, name, jsonPath });
      const object = state.observe({ apiVersion, kind, name });
      // Until the producer is there, "" stands in: the object that reads it is not applied.
      if (!object) {
        state.outcomes.set(key, 'missing');
        return '';
      }
      const read = observedValue(object, jsonPath);
      state.outcomes.set(key, read.ok ? 'found' : read.state);
      return read.ok ? read.value : '';
    }),
  );
  hb.registerHelper(OUT_HELPER, (value: unknown, options: Handlebars.HelperOptions) => {
    const state = stateOf(options);
    step(state);
    const hash = options.hash as {
      at?: string;
      helper?: string;
      observed?: string;
      parameter?: string;
      bare?: boolean;
    };
    const at = String(hash.at ?? '');
    let mark = '';
    if (hash.observed !== undefined) {
      mark = `${ATTRIBUTION_OPEN}${state.attributions.length}${ATTRIBUTION_CLOSE}`;
      state.attributions.push(hash.observed.split(',').map(Number));
      state.markup += mark.length;
    }
    if (value instanceof hb.SafeString) {
      // YAML syntax from a helper: part of the text itself, inside region markers so that the
      // parsed output can be checked for what this text did to the structure around it.
      const text = value.toString();
      // A path yields helper YAML too: `{{this}}` inside `{{#with (toYaml x)}}`.
      const helper = hash.helper ?? 'a helper';
      if (RESERVED.test(text))
        throw new Error(`${at}: the output of ${helper}: ${RESERVED_MESSAGE}`);
      grow(state, text.length);
      const id = state.regions.length;
      state.regions.push({ helper, at });
      state.markup += regionMarkup(id);
      return `${mark}${markRegion(id, text)}`;
    }
    if (typeof value === 'object' && value !== null) {
      throw new Error(
        `${at}: a ${Array.isArray(value) ? 'list' : 'map'} cannot be inserted as text; use {{toYaml ...}} or {{toJson ...}}`,
      );
    }
    const length = scalarText(value).length;
    state.values.push(value);
    state.sources.push({
      at,
      ...(hash.parameter !== undefined ? { parameter: hash.parameter } : {}),
      bare: hash.bare === true,
    });
    state.valueBytes += length;
    grow(state, length);
    return `${mark}${MARK_OPEN}${state.values.length - 1}${MARK_CLOSE}`;
  });
  return hb;
}

// The parser reports positions only through its parseError hook; keep them on the error.
(
  (Handlebars as unknown as { Parser: unknown }).Parser as {
    parseError: (msg: string, hash: unknown) => never;
  }
).parseError = (message: string, hash: unknown) => {
  throw Object.assign(new Error(message), { hash });
};

const env = createEnvironment();
const STENCIL_HELPERS: ReadonlySet<string> = new Set([...HELPER_NAMES, OBSERVED_HELPER]);

/** Names of the helpers templates may call inline. */
export function helperNames(): string[] {
  return [...STENCIL_HELPERS].sort();
}

/** Ids of the `observed` calls inside a mustache (itself, or any nested subexpression). */
function observedIds(node: hbs.AST.Node, ids: ReadonlyMap<hbs.AST.Node, number>): number[] {
  const own = ids.get(node);
  const found = own === undefined ? [] : [own];
  const call = node as Partial<hbs.AST.MustacheStatement>;
  for (const p of [...(call.params ?? []), ...(call.hash?.pairs.map((pair) => pair.value) ?? [])])
    if (p.type === 'SubExpression') found.push(...observedIds(p, ids));
  return found;
}

function stringPair(key: string, value: string, loc: hbs.AST.SourceLocation): hbs.AST.HashPair {
  return {
    type: 'HashPair',
    key,
    value: { type: 'StringLiteral', value, original: value, loc } as hbs.AST.StringLiteral,
    loc,
  };
}

function truePair(key: string, loc: hbs.AST.SourceLocation): hbs.AST.HashPair {
  const value = { type: 'BooleanLiteral', value: true, original: true, loc };
  return { type: 'HashPair', key, value: value, loc };
}

/** `x` for `parameters.x` (also `@root.parameters.x` and `../parameters.x`), else undefined. */
function parameterOf(node: hbs.AST.Node): string | undefined {
  if (node.type !== 'PathExpression') return undefined;
  const path = node as hbs.AST.PathExpression;
  const parts = path.data && path.parts[0] === 'root' ? path.parts.slice(1) : path.parts;
  if (path.data && path.parts[0] !== 'root') return undefined;
  return parts.length === 2 && parts[0] === 'parameters' ? parts[1] : undefined;
}

/** The parameter a `{{ }}` reads: its path itself, or the first among its call's arguments. */
function mustacheParameter(m: hbs.AST.MustacheStatement): string | undefined {
  const direct = parameterOf(m.path);
  if (direct !== undefined) return direct;
  for (const p of [...m.params, ...(m.hash?.pairs.map((pair) => pair.value) ?? [])]) {
    const found = parameterOf(p);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Wraps every `{{...}}` so its result passes through the value-marking helper; a `{{ }}` that
 * calls `observed` also passes the ids of those calls, for the attribution mark.
 */
function wrapMustaches(program: hbs.AST.Program, ids: ReadonlyMap<hbs.AST.Node, number>): void {
  for (const statement of program.body) {
    if (statement.type === 'MustacheStatement') {
      const m = statement as hbs.AST.MustacheStatement;
      const calls = ids.size > 0 ? observedIds(m, ids) : [];
      const isCall = m.params.length > 0 || (m.hash?.pairs.length ?? 0) > 0;
      const inner: hbs.AST.Expression = isCall
        ? ({
            type: 'SubExpression',
            path: m.path,
            params: m.params,
            hash: m.hash,
            loc: m.loc,
          } as hbs.AST.SubExpression)
        : m.path;
      const at = position(m);
      const helper = (m.path as hbs.AST.PathExpression).original;
      const parameter = mustacheParameter(m);
      m.path = {
        type: 'PathExpression',
        data: false,
        depth: 0,
        parts: [OUT_HELPER],
        original: OUT_HELPER,
        loc: m.loc,
      };
      m.params = [inner];
      const pairs = [stringPair('at', at, m.loc), stringPair('helper', helper, m.loc)];
      if (calls.length > 0) pairs.push(stringPair('observed', calls.join(','), m.loc));
      if (parameter !== undefined) pairs.push(stringPair('parameter', parameter, m.loc));
      if (parameter !== undefined && !isCall) pairs.push(truePair('bare', m.loc));
      m.hash = { type: 'Hash', loc: m.loc, pairs };
    } else if (statement.type === 'BlockStatement') {
      const b = statement as hbs.AST.BlockStatement;
      wrapMustaches(b.program, ids);
      if (b.inverse) wrapMustaches(b.inverse, ids);
    }
  }
}

type CompiledBody = (context: unknown, options: Handlebars.RuntimeOptions) => string;

export interface CompiledTemplate {
  /** Content hash of the body (the cache key). */
  hash: string;
  run: CompiledBody;
  /** The body's `observed` calls, in body order; a call's id is its index. */
  observed: ObservedCall[];
}

const cache = new Map<string, Outcome<CompiledTemplate>>();
const CACHE_LIMIT = 512;

/**
 * Parses, statically checks and compiles a template body. Results (including failures) are
 * cached by content hash, so a body is compiled once however many instances use it.
 */
export function compileTemplate(
  body: string,
  declaredParameters: Iterable<string>,
): Outcome<CompiledTemplate> {
  const parameters = new Set(declaredParameters);
  const hash = createHash('sha256')
    .update(body)
    .update('\0')
    .update([...parameters].sort().join(','))
    .digest('hex');
  const cached = cache.get(hash);
  if (cached) {
    cache.delete(hash);
    cache.set(hash, cached);
    return cached;
  }
  const result = compileUncached(body, parameters, hash);
  cache.set(hash, result);
  if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  return result;
}

function compileUncached(
  body: string,
  parameters: ReadonlySet<string>,
  hash: string,
): Outcome<CompiledTemplate> {
  if (RESERVED.test(body)) {
    return failure([
      {
        path: 'spec.handlebars',
        reason: 'ValidationFailed',
        message: 'the template contains reserved characters U+E000-U+E006',
      },
    ]);
  }
  let ast: hbs.AST.Program;
  try {
    ast = env.parse(body);
  } catch (err) {
    return failure([parseErrorProblem(err)]);
  }
  const checker = new TemplateChecker({ parameters, helpers: STENCIL_HELPERS });
  checker.program(ast, { depth: 0, blockParams: new Set() });
  if (checker.problems.length > 0) return failure(checker.problems);
  const calls = [...checker.observed.entries()].sort(
    ([, a], [, b]) => a.line - b.line || a.column - b.column,
  );
  const ids = new Map(calls.map(([node], id) => [node, id]));
  wrapMustaches(ast, ids);
  const knownHelpers = Object.fromEntries([...STENCIL_HELPERS, OUT_HELPER].map((h) => [h, true]));
  try {
    // precompile forces full compilation now (compile() is lazy) so errors surface at validation.
    env.precompile(ast, { knownHelpersOnly: true, knownHelpers });
    const run = env.compile(ast, {
      noEscape: true,
      knownHelpersOnly: true,
      knownHelpers,
      preventIndent: true,
    });
    return success({ hash, run, observed: calls.map(([, call]) => call) });
  } catch (err) {
    return failure([parseErrorProblem(err)]);
  }
}

function renderProblem(message: string): Problem {
  return { path: 'spec.handlebars', reason: InstanceReason.TemplateExecutionFailed, message };
}

const NOTHING_OBSERVED: ObservedLookup = () => undefined;

/**
 * A render's outcome and the texts it derived from Secret data: problem messages are not
 * redacted here; whoever shows them redacts them with these texts too.
 */
export type RenderOutcome = Outcome<RenderedDocument[]> & { tainted: TaintedTexts };

/**
 * Runs a compiled template and parses its output into Kubernetes objects (SPEC §5). `observe`
 * gives the live producers `observed` reads; without it every read is `missing`. `secret` names
 * the Secret-backed parameters, whose provenance the render tracks.
 */
export function renderTemplate(
  compiled: CompiledTemplate,
  context: RenderContext,
  observe: ObservedLookup = NOTHING_OBSERVED,
  secret: readonly string[] = [],
): RenderOutcome {
  const taint = Taint.of(context, secret);
  const outcome = renderWith(compiled, context, observe, taint);
  return { ...outcome, tainted: taint.derived };
}

function renderWith(
  compiled: CompiledTemplate,
  context: RenderContext,
  observe: ObservedLookup,
  taint: Taint,
): Outcome<RenderedDocument[]> {
  const state: RenderState = {
    values: [],
    sources: [],
    regions: [],
    markup: 0,
    steps: 0,
    valueBytes: 0,
    estimate: 0,
    nested: [],
    work: 0,
    observe,
    outcomes: new Map(),
    attributions: [],
    taint,
  };
  let marked: string;
  try {
    marked = compiled.run(context, {
      data: { [STATE_KEY]: state },
      allowProtoMethodsByDefault: false,
      allowProtoPropertiesByDefault: false,
    });
  } catch (err) {
    return failure([renderProblem(`render failed: ${errorText(err)}`)]);
  }
  const extracted = extractRegions(marked, state.regions.length);
  if (!extracted) return failure([renderProblem(RESERVED_MESSAGE)]);
  const attributed = takeAttributions(extracted.text, state.attributions.length);
  if (!attributed) return failure([renderProblem(RESERVED_MESSAGE)]);
  const { text } = attributed;
  const spans = withoutAttributions(extracted.spans, extracted.text);
  const size = text.length + state.valueBytes;
  if (size > MAX_RENDERED_BYTES) {
    return failure([
      renderProblem(`rendered output is ${size} bytes; the limit is ${MAX_RENDERED_BYTES} (2 MiB)`),
    ]);
  }
  const forged = checkMarkers(text, state.values.length);
  if (forged) return failure([renderProblem(forged)]);
  const parsed = parseDocuments(text, state, { spans, regions: state.regions });
  if (!parsed.ok || compiled.observed.length === 0) return parsed;
  return success(attachObserved(parsed.value, attributed.marks, state, compiled.observed));
}

interface AttributionMark {
  /** Offset in the text without marks. */
  offset: number;
  calls: number[];
}

/**
 * Removes the attribution marks, which must be exactly 0..count-1 in output order (a helper's
 * output carrying one is a forgery), and returns where each stood.
 */
function takeAttributions(
  text: string,
  count: number,
): { text: string; marks: { offset: number; seq: number }[] } | undefined {
  if (count === 0) return /[\uE005\uE006]/.test(text) ? undefined : { text, marks: [] };
  const marks: { offset: number; seq: number }[] = [];
  let removed = 0;
  const stripped = text.replace(ATTRIBUTION, (match: string, seq: string, at: number) => {
    marks.push({ offset: at - removed, seq: Number(seq) });
    removed += match.length;
    return '';
  });
  if (marks.length !== count || marks.some((m, i) => m.seq !== i)) return undefined;
  return /[\uE005\uE006]/.test(stripped) ? undefined : { text: stripped, marks };
}

/**
 * Region spans measured in a text that still had its attribution marks, moved to the text
 * without them (a mark is never inside a region: it precedes a whole `{{ }}` output).
 */
function withoutAttributions(spans: RegionSpan[], marked: string): RegionSpan[] {
  const cuts = [...marked.matchAll(ATTRIBUTION)];
  if (cuts.length === 0) return spans;
  // removed[i]: characters of the first i marks; shift(p) is that of the marks before p (binary
  // search: 45,000 observed reads made the old scan of every mark per span take seconds).
  const removed = [0];
  for (const cut of cuts) removed.push(removed[removed.length - 1]! + cut[0].length);
  const shift = (p: number): number => {
    let low = 0;
    let high = cuts.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (cuts[mid]!.index < p) low = mid + 1;
      else high = mid;
    }
    return removed[low]!;
  };
  return spans.map((s) => ({ ...s, start: s.start - shift(s.start), end: s.end - shift(s.end) }));
}

/** Gives each document the `observed` reads whose marks fell inside it. */
function attachObserved(
  documents: RenderedDocument[],
  marks: { offset: number; seq: number }[],
  state: RenderState,
  calls: readonly ObservedCall[],
): RenderedDocument[] {
  const located: AttributionMark[] = marks.map((m) => ({
    offset: m.offset,
    calls: state.attributions[m.seq] ?? [],
  }));
  let mark = 0;
  return documents.map((doc, i) => {
    const next = documents[i + 1];
    const seen = new Map<string, ObservedInput>();
    while (mark < located.length && (!next || located[mark]!.offset < next.offset)) {
      for (const id of located[mark]!.calls) {
        const call = calls[id]!;
        const key = observedKey(call);
        const { apiVersion, kind, name, jsonPath } = call;
        const outcome = state.outcomes.get(key) ?? 'missing';
        seen.set(key, { apiVersion, kind, name, jsonPath, state: outcome });
      }
      mark++;
    }
    return { ...doc, observed: [...seen.values()] };
  });
}

function errorText(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof RenderHelperError && err.location) {
    return `line ${err.location.line}, column ${err.location.column + 1}: ${message}`;
  }
  return message;
}

/** Every marker id must appear at most once and no stray marker character may remain. */
function checkMarkers(text: string, count: number): string | undefined {
  const seen = new Set<number>();
  for (const match of text.matchAll(MARKER)) {
    const id = Number(match[1]);
    if (id >= count || seen.has(id)) return RESERVED_MESSAGE;
    seen.add(id);
  }
  return RESERVED.test(text.replace(MARKER, '')) ? RESERVED_MESSAGE : undefined;
}

/** Text of a scalar value as it appears inside a larger string; nothing for null/undefined. */
function scalarText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return '';
}

/**
 * The index of `item` in `seq`; each sequence is indexed once, so the paths of all the items of
 * a long list cost linear time (indexOf per item made 20,000 items cost 150 ms more).
 */
const itemIndexes = new WeakMap<YAMLSeq, Map<unknown, number>>();
function indexIn(seq: YAMLSeq, item: unknown): number {
  let indexes = itemIndexes.get(seq);
  if (!indexes) {
    indexes = new Map(seq.items.map((it, i) => [it, i]));
    itemIndexes.set(seq, indexes);
  }
  return indexes.get(item) ?? -1;
}

/** The keys and indexes from the document down to `node` (its ancestors as `visit` reports them). */
function segmentsOf(ancestors: readonly unknown[], node: unknown): (string | number)[] {
  const segments: (string | number)[] = [];
  const chain = [...ancestors, node];
  for (const [i, ancestor] of chain.entries()) {
    if (isPair(ancestor)) segments.push(keyText(ancestor.key));
    else if (isSeq(ancestor)) segments.push(indexIn(ancestor, chain[i + 1]));
  }
  return segments;
}

/** JSON pointer of a value node from its ancestors. */
function pointerOf(ancestors: readonly unknown[], node: unknown): string {
  return segmentsOf(ancestors, node)
    .map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`)
    .join('');
}

/** The origin of a value scalar that held the markers `ids`. */
function originOf(
  sources: readonly InsertionSource[],
  ids: number[],
  pointer: string,
  whole: boolean,
): ValueOrigin | undefined {
  const source =
    ids.map((id) => sources[id]).find((s) => s?.parameter !== undefined) ?? sources[ids[0] ?? -1];
  if (!source) return undefined;
  return {
    pointer,
    at: source.at,
    ...(source.parameter !== undefined ? { parameter: source.parameter } : {}),
    placed: whole && source.bare,
  };
}

/**
 * Puts the real values back into a parsed document, after YAML has decided the structure, and
 * records where each value scalar came from. Returns the key scalars that received a value: only
 * they can collide with another key.
 */
function substituteValues(
  doc: Document,
  state: Pick<RenderState, 'values' | 'sources' | 'taint'>,
  origins: ValueOrigin[],
): Set<Scalar> {
  const { values, sources, taint } = state;
  const keys = new Set<Scalar>();
  visit(doc, {
    Scalar(key, node, ancestors) {
      if (typeof node.value !== 'string' || !node.value.includes(MARK_OPEN)) return;
      if (key === 'key') keys.add(node);
      const whole = /^\uE000(\d+)\uE001$/.exec(node.value);
      const ids: number[] = [];
      const entire = whole !== null && node.type === 'PLAIN' && !node.tag;
      if (entire) {
        ids.push(Number(whole[1]));
        const value = values[Number(whole[1])];
        node.value = value === undefined ? null : value;
      } else {
        node.value = node.value.replace(MARKER, (_m, id: string) => {
          ids.push(Number(id));
          return scalarText(values[Number(id)]);
        });
        // A scalar glued from pieces, one of them from a Secret and too short to be found
        // inside a word (`x{{this}}x` over its characters), is tainted as a whole: a message
        // may quote the scalar. A longer piece is found and redacted where it stands.
        const short = ids
          .map((id) => values[id])
          .filter((v) => scalarText(v).length < MIN_SUBSTRING_LENGTH);
        taint.propagate(short, node.value);
      }
      if (key !== 'key') {
        const origin = originOf(sources, ids, pointerOf(ancestors, node), entire);
        if (origin) origins.push(origin);
      }
      // A plain `<<` key is a YAML 1.1 merge: a value must never turn a key into one.
      if (node.value === '<<') node.type = 'QUOTE_DOUBLE';
    },
  });
  return keys;
}

/** The text a key becomes in the resulting object (what toJS would name the property). */
function keyText(key: unknown): string {
  const value: unknown = isScalar(key) ? key.value : key;
  if (value === null || value === undefined) return '';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return String(value);
  return JSON.stringify(value) ?? '';
}

/** `metadata.labels`-style path of a node from its ancestors (as `visit` reports them). */
function pathOf(ancestors: readonly unknown[], node: unknown): string {
  const segments = segmentsOf(ancestors, node).map((s) => (typeof s === 'number' ? `[${s}]` : s));
  return segments.join('.').replace(/\.\[/g, '[') || '(top level)';
}

/**
 * A key that appears twice in one mapping, checked after substitution in one pass with a set per
 * mapping (the yaml library's own check compares every pair: 60,000 keys took 30 s). A key that
 * came from a value may equal another key of its mapping, which would silently replace what the
 * template wrote (`{{x}}: y` under metadata with x = `name`); a key the template wrote twice is
 * YAML's own error.
 */
function duplicateKey(
  doc: Document,
  substituted: ReadonlySet<Scalar>,
  lineCounter: LineCounter,
): { line: number; detail: string } | undefined {
  let found: { line: number; detail: string } | undefined;
  visit(doc, {
    Map(_key, map, ancestors) {
      const seen = new Map<string, unknown>();
      for (const pair of map.items) {
        const text = keyText(pair.key);
        const first = seen.get(text);
        if (first === undefined) {
          seen.set(text, pair.key ?? null);
          continue;
        }
        const at = isScalar(pair.key) && pair.key.range ? pair.key.range[0] : 0;
        const fromValue = substituted.has(pair.key as Scalar) || substituted.has(first as Scalar);
        found = {
          line: lineCounter.linePos(at).line,
          detail: fromValue
            ? `the key "${text}" appears twice in ${pathOf(ancestors, map)}; a value produced a key that the template already wrote`
            : `Map keys must be unique: "${text}" appears twice in ${pathOf(ancestors, map)}`,
        };
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}

function manifestProblem(object: unknown): string | undefined {
  if (!isMap(object)) return 'is not a mapping';
  if (typeof object.apiVersion !== 'string' || object.apiVersion === '') return 'has no apiVersion';
  if (typeof object.kind !== 'string' || object.kind === '') return 'has no kind';
  const metadata = object.metadata;
  if (!isMap(metadata) || typeof metadata.name !== 'string' || metadata.name === '')
    return 'has no metadata.name';
  return undefined;
}

interface HelperText {
  spans: readonly RegionSpan[];
  regions: readonly HelperRegion[];
}

/** What a helper's YAML text did wrong, where, and what the author can do instead. */
function regionProblem(helper: HelperRegion, where: string, detail: string): Problem {
  return renderProblem(
    `${where}: the output of ${helper.helper} (template ${helper.at}) ${detail}; a helper's YAML must be a whole value (key: {{quote x}}), whole entries ({{nindent 4 (toYaml x)}}), or stay inside one scalar or comment whatever the value: to put a value inside a larger text, insert it as {{x}}`,
  );
}

function docIndexAt(docs: readonly Document.Parsed[], offset: number): number {
  const index = docs.findIndex((d) => offset < d.range[2]);
  return index === -1 ? docs.length : index + 1;
}

/**
 * The first parse error (attributed to the helper whose YAML text caused it, when one did), or
 * the first helper region that changed the structure around it.
 */
function syntaxProblem(
  text: string,
  docs: readonly Document.Parsed[],
  lineCounter: LineCounter,
  helpers: HelperText,
): Problem | undefined {
  for (const [docIndex, doc] of docs.entries()) {
    const error = doc.errors[0];
    if (!error) continue;
    const at = error.linePos?.[0]?.line ?? lineCounter.linePos(doc.range[0]).line;
    const first = (error.message.split('\n')[0] ?? '').replace(/:$/, '');
    const where = `document ${docIndex + 1} (line ${at} of the output): ${first}`;
    const span = regionAt(text, helpers.spans, error.pos[0], lineCounter, '1.1');
    return span
      ? regionProblem(helpers.regions[span.region]!, where, 'is inserted there')
      : renderProblem(where);
  }
  const fault = checkRegions(text, docs, helpers.spans, '1.1');
  if (!fault) return undefined;
  const pos = lineCounter.linePos(fault.offset);
  return regionProblem(
    helpers.regions[fault.region]!,
    `document ${docIndexAt(docs, fault.offset)} (line ${pos.line}, column ${pos.col} of the output)`,
    'changes the YAML structure around it',
  );
}

function parseDocuments(
  text: string,
  state: Pick<RenderState, 'values' | 'sources' | 'taint'>,
  helpers: HelperText,
): Outcome<RenderedDocument[]> {
  const lineCounter = new LineCounter();
  // Duplicate keys are checked after substitution, in linear time (duplicateKey).
  const docs = parseAllDocuments(text, { ...KUBERNETES_YAML, uniqueKeys: false, lineCounter });
  if (!Array.isArray(docs))
    return failure([renderProblem('the rendered output is not a YAML stream')]);
  const broken = syntaxProblem(text, docs, lineCounter, helpers);
  if (broken) return failure([broken]);
  const rendered: RenderedDocument[] = [];
  for (const [docIndex, doc] of docs.entries()) {
    const line = lineCounter.linePos(doc.range[0]).line;
    if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) continue;
    const origins: ValueOrigin[] = [];
    const collision = duplicateKey(doc, substituteValues(doc, state, origins), lineCounter);
    if (collision)
      return failure([
        renderProblem(
          `document ${docIndex + 1} (line ${collision.line} of the output): ${collision.detail}`,
        ),
      ]);
    let object: unknown;
    try {
      object = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      return failure([
        renderProblem(
          `document ${docIndex + 1} (line ${line} of the output): ${(err as Error).message}`,
        ),
      ]);
    }
    const wrong = manifestProblem(object);
    if (wrong) {
      return failure([
        renderProblem(
          `document ${docIndex + 1} (line ${line} of the output) ${wrong}: each document must be a mapping with apiVersion, kind and metadata.name`,
        ),
      ]);
    }
    rendered.push({
      index: rendered.length,
      line,
      offset: doc.range[0],
      object: object as KubeObject,
      observed: [],
      origins,
    });
    if (rendered.length > MAX_RESOURCES) {
      return failure([renderProblem(`the template rendered more than ${MAX_RESOURCES} resources`)]);
    }
  }
  return success(rendered);
}
