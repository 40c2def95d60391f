// A `pattern` in the RE2 syntax the API server checks a CRD's `pattern` with, matched in linear
// time. JavaScript's RegExp backtracks, and bounding the input does not make that safe:
// `^(a+)+$` takes seconds on 30 characters, `(a|aa)+$` half a minute on 41, and `a*a*a*a*a*b`
// (no nested quantifier at all) does not finish on 2,000. No static screen of patterns keeps a
// check bounded, so a parameter's value is never given to a RegExp: the pattern is parsed here,
// compiled into an automaton (Thompson's construction) and simulated one state set per input
// character, as RE2 does, with no backtracking. The work is at most (value length + 1) × program
// size, and a budget of steps bounds even that.
//
// The language is what RE2 and JavaScript's `u` mode both read, and read alike: a pattern must
// compile as `new RegExp(pattern, 'u')` (so `stencil validate` and any JavaScript consumer can
// read it), and what RE2 lacks or reads otherwise is refused by name: lookaround, backreferences,
// `\u` and `\c` escapes, `[\b]`, `[]`, `[^]`, POSIX classes, Unicode properties other than the
// general categories and `Any`, flag groups and repetition counts over 1,000 (RE2's limit).
// Where the two engines give the same syntax different meanings, RE2's wins, as the API server's:
// `.` is any character but `\n`, and `\s` is `[\t\n\f\r ]`.

export interface Re2Pattern {
  /**
   * Whether the pattern matches somewhere in `text` (unanchored, like RE2's MatchString), or
   * `undefined` when deciding would take more than {@link MAX_MATCH_STEPS} steps.
   */
  matches(text: string): boolean | undefined;
}

export type Re2Compiled = { ok: true; pattern: Re2Pattern } | { ok: false; message: string };

/** RE2 refuses a repetition count above this (`a{1001}`). */
export const MAX_REPEAT = 1000;
/** Groups nested deeper than this are refused (RE2's own nesting limit is 1,000 as well). */
export const MAX_NESTING = 1000;
/** Automaton states, once repetitions are counted out: `(a{1000}){1000}` would be a million. */
export const MAX_PROGRAM = 20_000;
/** States visited while matching one value: a fraction of a second, whatever the pattern. */
export const MAX_MATCH_STEPS = 50_000_000;

type CharTest = (cp: number) => boolean;
type Assertion = 'start' | 'end' | 'boundary' | 'not-boundary';

type Node =
  | { kind: 'empty' }
  | { kind: 'char'; test: CharTest }
  | { kind: 'assert'; assertion: Assertion }
  | { kind: 'concat'; items: Node[] }
  | { kind: 'alternate'; items: Node[] }
  | { kind: 'repeat'; item: Node; min: number; max: number };

/** A pattern outside the language; the message completes "the pattern P ...". */
class Refused extends Error {}

/** A construct RE2 lacks or reads otherwise: `what` completes "it uses ...". */
const notRe2 = (what: string): Refused => new Refused(`is not RE2: it uses ${what}`);

const cp = (char: string): number => char.codePointAt(0)!;
const range =
  (lo: number, hi: number): CharTest =>
  (c) =>
    c >= lo && c <= hi;
const anyOf =
  (tests: CharTest[]): CharTest =>
  (c) =>
    tests.some((t) => t(c));
const not =
  (test: CharTest): CharTest =>
  (c) =>
    !test(c);

// RE2's Perl classes are ASCII (JavaScript's \s also takes Unicode spaces).
const DIGIT = range(0x30, 0x39);
const WORD = anyOf([DIGIT, range(0x41, 0x5a), range(0x61, 0x7a), (c) => c === 0x5f]);
const SPACE: CharTest = (c) => c === 0x20 || (c >= 0x09 && c <= 0x0d && c !== 0x0b);
const PERL: Record<string, CharTest> = {
  d: DIGIT,
  D: not(DIGIT),
  w: WORD,
  W: not(WORD),
  s: SPACE,
  S: not(SPACE),
};
const CONTROL: Record<string, number> = { f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };
/** The characters either engine lets a backslash make literal. */
const SYNTAX = new Set('^$\\.*+?()[]{}|/-');
/** Property names both engines read alike: general categories (not C: JavaScript adds Cn). */
const CATEGORIES = new Set([
  ...['Any', 'Cc', 'Cf', 'Co', 'Cs', 'L', 'Ll', 'Lm', 'Lo', 'Lt', 'Lu', 'M', 'Mc', 'Me', 'Mn'],
  ...['N', 'Nd', 'Nl', 'No', 'P', 'Pc', 'Pd', 'Pe', 'Pf', 'Pi', 'Po', 'Ps'],
  ...['S', 'Sc', 'Sk', 'Sm', 'So', 'Z', 'Zl', 'Zp', 'Zs'],
]);

function property(name: string, negated: boolean): CharTest {
  if (!CATEGORIES.has(name))
    throw notRe2(
      `the Unicode property ${name}, which RE2 does not know by that name ` +
        '(use a general category such as L, Lu or Nd)',
    );
  const re = new RegExp(`^\\p{${name}}$`, 'u');
  const test: CharTest = (c) => re.test(String.fromCodePoint(c));
  return negated ? not(test) : test;
}

/** Recursive descent over the pattern's code points; every refusal names its construct. */
class Parser {
  private at = 0;
  private depth = 0;
  private readonly chars: string[];

  constructor(source: string) {
    this.chars = Array.from(source);
  }

  parse(): Node {
    const node = this.alternation();
    if (this.at < this.chars.length) throw notRe2(`an unbalanced ")"`);
    return node;
  }

  private peek(offset = 0): string | undefined {
    return this.chars[this.at + offset];
  }

  private next(): string {
    const char = this.chars[this.at++];
    if (char === undefined) throw notRe2('an unfinished construct at the end');
    return char;
  }

  private alternation(): Node {
    const items = [this.concatenation()];
    while (this.peek() === '|') {
      this.at++;
      items.push(this.concatenation());
    }
    return items.length === 1 ? items[0]! : { kind: 'alternate', items };
  }

  private concatenation(): Node {
    const items: Node[] = [];
    while (this.at < this.chars.length && this.peek() !== '|' && this.peek() !== ')') {
      items.push(this.quantified(this.atom()));
    }
    if (items.length === 0) return { kind: 'empty' };
    return items.length === 1 ? items[0]! : { kind: 'concat', items };
  }

  private quantified(item: Node): Node {
    const bounds = this.quantifier();
    if (bounds === undefined) return item;
    if (this.peek() === '?') this.at++; // lazy: the same strings match
    // A bare assertion (^*) or a second quantifier (a**) never gets here: RegExp refused it.
    if (this.quantifier() !== undefined) throw notRe2('a repetition of a repetition');
    return { kind: 'repeat', item, min: bounds[0], max: bounds[1] };
  }

  private quantifier(): [number, number] | undefined {
    const char = this.peek();
    if (char === '*' || char === '+' || char === '?') {
      this.at++;
      return char === '*' ? [0, Infinity] : char === '+' ? [1, Infinity] : [0, 1];
    }
    if (char !== '{') return undefined;
    const rest = this.chars.slice(this.at, this.at + 32).join('');
    const counted = /^\{(\d+)(,(\d*))?\}/.exec(rest);
    if (!counted) throw notRe2('a "{" that is no repetition count');
    this.at += Array.from(counted[0]).length;
    const min = Number(counted[1]);
    const max = counted[2] === undefined ? min : counted[3] ? Number(counted[3]) : Infinity;
    if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT))
      throw notRe2(`a repetition count over ${MAX_REPEAT}, which RE2 refuses`);
    if (max < min) throw notRe2(`a repetition {${min},${max}} whose bounds are out of order`);
    return [min, max];
  }

  private atom(): Node {
    const char = this.next();
    switch (char) {
      case '(':
        return this.group();
      case '[':
        return { kind: 'char', test: this.characterClass() };
      case '.':
        return { kind: 'char', test: (c) => c !== 0x0a };
      case '^':
        return { kind: 'assert', assertion: 'start' };
      case '$':
        return { kind: 'assert', assertion: 'end' };
      case '\\':
        return this.escape();
      case '*':
      case '+':
      case '?':
      case '{':
        throw notRe2(`a "${char}" with nothing to repeat`);
      case ']':
      case '}':
        throw notRe2(`an unescaped "${char}"`);
      default: {
        const c = cp(char);
        return { kind: 'char', test: (x) => x === c };
      }
    }
  }

  private group(): Node {
    if (++this.depth > MAX_NESTING)
      throw new Refused(`nests groups deeper than ${MAX_NESTING} levels, more than RE2 allows`);
    if (this.peek() === '?') {
      const kind = this.chars.slice(this.at, this.at + 3).join('');
      if (kind.startsWith('?=') || kind.startsWith('?!'))
        throw notRe2(`lookahead (${kind.slice(0, 2)}, which RE2 lacks`);
      if (kind === '?<=' || kind === '?<!') throw notRe2(`lookbehind (${kind}, which RE2 lacks`);
      if (kind.startsWith('?:')) this.at += 2;
      else if (kind.startsWith('?<')) this.groupName();
      else
        throw new Refused('uses a group flag such as (?i:...), which this check does not support');
    }
    const inner = this.alternation();
    if (this.peek() !== ')') throw notRe2('an unterminated group');
    this.at++;
    this.depth--;
    return inner;
  }

  /** `?<name>`: a named group, as RE2 (Go 1.22) and JavaScript both write it. */
  private groupName(): void {
    this.at += 2;
    while (this.peek() !== undefined && this.peek() !== '>') {
      if (!/^[A-Za-z0-9_]$/.test(this.peek()!))
        throw notRe2('a group name RE2 does not accept (letters, digits and _ only)');
      this.at++;
    }
    this.next();
  }

  /** An escape outside a class: an assertion, a class, or one character. */
  private escape(): Node {
    const char = this.peek();
    if (char === 'b' || char === 'B') {
      this.at++;
      return { kind: 'assert', assertion: char === 'b' ? 'boundary' : 'not-boundary' };
    }
    const atom = this.escapedAtom(false);
    return { kind: 'char', test: typeof atom === 'number' ? (x) => x === atom : atom };
  }

  /** What follows a backslash, as one character or a class of them. */
  private escapedAtom(inClass: boolean): number | CharTest {
    const char = this.next();
    if (PERL[char]) return PERL[char];
    if (CONTROL[char] !== undefined) return CONTROL[char];
    if (SYNTAX.has(char)) return cp(char);
    if (char === '0' && !/^[0-9]$/.test(this.peek() ?? '')) return 0;
    if (char === 'x') return this.hexEscape();
    if (char === 'p' || char === 'P') return this.propertyEscape(char);
    throw notRe2(refusedEscape(char, inClass));
  }

  /** `\xHH` after its `x`: exactly two hex digits in both engines. */
  private hexEscape(): number {
    const hex = this.chars.slice(this.at, this.at + 2).join('');
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw notRe2('a \\x escape without two hex digits');
    this.at += 2;
    return parseInt(hex, 16);
  }

  /** `\p{Name}` or `\P{Name}` after its letter. */
  private propertyEscape(letter: string): CharTest {
    const name = /^\{([A-Za-z_=]+)\}/.exec(this.chars.slice(this.at, this.at + 64).join(''));
    if (!name) throw notRe2(`a \\${letter} escape without {name}`);
    this.at += name[0].length;
    return property(name[1]!, letter === 'P');
  }

  /** `[...]` after its `[`: ranges, single characters and classes; `^` first negates. */
  private characterClass(): CharTest {
    const negated = this.peek() === '^';
    if (negated) this.at++;
    if (this.peek() === ']')
      throw notRe2('an empty class [] or [^], which RE2 reads as a class starting with "]"');
    const tests: CharTest[] = [];
    while (this.peek() !== ']') {
      if (/^\[:[A-Za-z]*:\]/.test(this.chars.slice(this.at, this.at + 16).join('')))
        throw notRe2('a POSIX class such as [:alpha:], which JavaScript reads as plain characters');
      const low = this.classAtom();
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== undefined) {
        this.at++;
        const high = this.classAtom();
        if (typeof low !== 'number' || typeof high !== 'number')
          throw notRe2('a range whose end is a class');
        if (high < low) throw notRe2('a range whose bounds are out of order');
        tests.push(range(low, high));
      } else {
        tests.push(typeof low === 'number' ? (x) => x === low : low);
      }
    }
    this.at++;
    const test = anyOf(tests);
    return negated ? not(test) : test;
  }

  private classAtom(): number | CharTest {
    const char = this.next();
    if (char === '\\') return this.escapedAtom(true);
    return cp(char);
  }
}

type Inst =
  | { op: 'char'; test: CharTest; next: number }
  | { op: 'split'; next: number; alt: number }
  | { op: 'assert'; assertion: Assertion; next: number }
  | { op: 'match' };

/** Why an escape that RegExp took is refused: completes "it uses ...". */
function refusedEscape(char: string, inClass: boolean): string {
  if (/^[1-9]$/.test(char)) return `a backreference \\${char}, which RE2 lacks`;
  if (char === 'k') return 'a named backreference \\k<...>, which RE2 lacks';
  if (char === 'u') return 'a \\u escape, which RE2 lacks (write the character)';
  if (char === 'c') return 'a control escape \\c, which RE2 lacks';
  if (inClass && char === 'b') return '[\\b], which RE2 lacks';
  return `the escape \\${char}, which RE2 and JavaScript read differently`;
}

const tooLarge = (): Refused =>
  new Refused(
    `is too large to check: more than ${MAX_PROGRAM} states once its repetitions are counted out`,
  );

/** Thompson's construction, built back to front: each node is compiled knowing what follows. */
class Compiler {
  readonly program: Inst[] = [{ op: 'match' }];
  /** Calls of compile: `((){1000}){1000}` emits nothing, but must not loop a million times. */
  private calls = 0;

  private emit(inst: Inst): number {
    if (this.program.length >= MAX_PROGRAM) throw tooLarge();
    this.program.push(inst);
    return this.program.length - 1;
  }

  compile(node: Node, next: number): number {
    if (++this.calls > 4 * MAX_PROGRAM) throw tooLarge();
    switch (node.kind) {
      case 'empty':
        return next;
      case 'char':
        return this.emit({ op: 'char', test: node.test, next });
      case 'assert':
        return this.emit({ op: 'assert', assertion: node.assertion, next });
      case 'concat':
        return node.items.reduceRight((after, item) => this.compile(item, after), next);
      case 'alternate': {
        const starts = node.items.map((item) => this.compile(item, next));
        return starts.reduceRight((rest, start) =>
          this.emit({ op: 'split', next: start, alt: rest }),
        );
      }
      case 'repeat':
        return this.repeat(node.item, node.min, node.max, next);
    }
  }

  /** `x{min,max}`: min copies, then `x+`/`x*` or (max - min) nested optional copies. */
  private repeat(item: Node, min: number, max: number, next: number): number {
    let start = next;
    let copies = min;
    if (max === Infinity) {
      const loop = this.emit({ op: 'split', next: -1, alt: next });
      const body = this.compile(item, loop);
      (this.program[loop] as { next: number }).next = body;
      start = copies > 0 ? body : loop; // x+ enters the body, x* may skip it
      copies = Math.max(copies - 1, 0);
    } else {
      for (let i = min; i < max; i++)
        start = this.emit({ op: 'split', next: this.compile(item, start), alt: next });
    }
    for (let i = 0; i < copies; i++) start = this.compile(item, start);
    return start;
  }
}

/** A test answered from a table for ASCII, where most values and most work are. */
function asciiTable(test: CharTest): Uint8Array {
  const table = new Uint8Array(128);
  for (let c = 0; c < 128; c++) table[c] = test(c) ? 1 : 0;
  return table;
}

const isWord = (c: number): boolean => c >= 0 && c < 128 && WORD(c);

function holds(assertion: Assertion, before: number, after: number): boolean {
  switch (assertion) {
    case 'start':
      return before === -1;
    case 'end':
      return after === -1;
    case 'boundary':
      return isWord(before) !== isWord(after);
    case 'not-boundary':
      return isWord(before) === isWord(after);
  }
}

const MATCH = 0;
const CHAR = 1;
const SPLIT = 2;
const ASSERT = 3;
const ASSERTIONS: Assertion[] = ['start', 'end', 'boundary', 'not-boundary'];

/** The program in flat arrays: the simulation's inner loop touches no object. */
class Automaton {
  private readonly op: Uint8Array;
  private readonly next: Int32Array;
  /** A split's second branch; an assertion's index in ASSERTIONS. */
  private readonly alt: Int32Array;
  private readonly tables: (Uint8Array | undefined)[];
  private readonly tests: (CharTest | undefined)[];

  constructor(
    program: Inst[],
    private readonly start: number,
  ) {
    const n = program.length;
    this.op = new Uint8Array(n);
    this.next = new Int32Array(n);
    this.alt = new Int32Array(n);
    this.tables = new Array<Uint8Array | undefined>(n);
    this.tests = new Array<CharTest | undefined>(n);
    const tables = new Map<CharTest, Uint8Array>();
    program.forEach((inst, pc) => {
      if (inst.op === 'match') return;
      this.next[pc] = inst.next;
      if (inst.op === 'split') {
        this.op[pc] = SPLIT;
        this.alt[pc] = inst.alt;
      } else if (inst.op === 'assert') {
        this.op[pc] = ASSERT;
        this.alt[pc] = ASSERTIONS.indexOf(inst.assertion);
      } else {
        this.op[pc] = CHAR;
        this.tests[pc] = inst.test;
        let table = tables.get(inst.test);
        if (!table) tables.set(inst.test, (table = asciiTable(inst.test)));
        this.tables[pc] = table;
      }
    });
  }

  /** The state-set simulation: every thread advances together, one input character at a time. */
  matches(text: string): boolean | undefined {
    const { op, next, alt, tables, tests } = this;
    const n = op.length;
    const seen = new Int32Array(n).fill(-1);
    const stack = new Int32Array(2 * n + 1);
    let current = new Int32Array(n);
    let following = new Int32Array(n);
    let currentSize = 0;
    let followingSize = 0;
    let steps = 0;

    /** Adds `pc` and what it reaches without reading (at one position); true on a match. */
    const add = (
      toCurrent: boolean,
      pc: number,
      before: number,
      after: number,
      mark: number,
    ): boolean => {
      let top = 0;
      stack[top++] = pc;
      while (top > 0) {
        const at = stack[--top]!;
        if (seen[at] === mark) continue;
        seen[at] = mark;
        steps++;
        switch (op[at]) {
          case MATCH:
            return true;
          case CHAR:
            if (toCurrent) current[currentSize++] = at;
            else following[followingSize++] = at;
            break;
          case SPLIT:
            stack[top++] = alt[at]!;
            stack[top++] = next[at]!;
            break;
          default:
            if (holds(ASSERTIONS[alt[at]!]!, before, after)) stack[top++] = next[at]!;
        }
      }
      return false;
    };

    let index = 0;
    let before = -1;
    let char = text.length > 0 ? text.codePointAt(0)! : -1;
    for (let position = 0; ; position++) {
      // Unanchored: a match may begin at every position, as if the pattern began with .*?
      if (add(true, this.start, before, char, position)) return true;
      if (char === -1) return false;
      const width = char > 0xffff ? 2 : 1;
      const after = index + width < text.length ? text.codePointAt(index + width)! : -1;
      for (let i = 0; i < currentSize; i++) {
        const pc = current[i]!;
        steps++;
        const passes = char < 128 ? tables[pc]![char] === 1 : tests[pc]!(char);
        if (passes && add(false, next[pc]!, char, after, position + 1)) return true;
      }
      if (steps > MAX_MATCH_STEPS) return undefined;
      [current, following] = [following, current];
      currentSize = followingSize;
      followingSize = 0;
      before = char;
      char = after;
      index += width;
    }
  }
}

/**
 * Compiles `source` (see the file comment for the language). Refused: not a JavaScript `u`
 * RegExp (the engine's message), or outside RE2 (naming the construct), or too large.
 */
export function compileRe2(source: string): Re2Compiled {
  try {
    new RegExp(source, 'u');
  } catch (error) {
    const text = (error as Error).message.replace(/^Invalid regular expression: \/.*\/u?: /s, '');
    return { ok: false, message: `is not a valid regular expression: ${text}` };
  }
  try {
    const compiler = new Compiler();
    const start = compiler.compile(new Parser(source).parse(), 0);
    return { ok: true, pattern: new Automaton(compiler.program, start) };
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    return { ok: false, message: error.message };
  }
}
