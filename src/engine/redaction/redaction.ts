// Keeps Secret values out of every message Stencil writes (conditions, Events, logs, CLI output).
// A Redactor knows the texts that derive from Secret data in one evaluation, by provenance: the
// values read from Secrets and every text the render computed from them (see taint.ts), and
// replaces each occurrence with a placeholder that names the parameter. The search is linear in
// the message for each distinct text length (a rolling hash), never one RegExp built from the
// values. See docs/adr/0016-redaction-by-provenance.md.
import { Buffer } from 'node:buffer';
import type { JsonValue } from '../../api/object-meta.ts';
import type { Problem } from '../shared/problem.ts';

/** A Secret-backed parameter: its name and its resolved (typed) value. */
export interface SecretValue {
  name: string;
  value: JsonValue;
}

/** Texts derived from Secret data, each with the parameter it came from. */
export type TaintedTexts = ReadonlyMap<string, string>;

/**
 * Shorter texts are redacted only as whole words: a substring match would garble every message
 * (a one-character secret "e" is in almost every word), and a secret that short is guessable.
 */
export const MIN_SUBSTRING_LENGTH = 4;

/**
 * Scalars and map keys of a value, without recursion (a value read from a Secret may be nested
 * deeply).
 */
function leaves(value: JsonValue, out: string[]): void {
  const stack: JsonValue[] = [value];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (item === null) continue;
    if (typeof item === 'string') out.push(item);
    else if (typeof item === 'number' || typeof item === 'boolean') out.push(String(item));
    else if (Array.isArray(item)) for (const child of item) stack.push(child);
    else
      for (const [key, child] of Object.entries(item)) {
        // A map's keys are part of the Secret's value too (a map of user to token).
        out.push(key);
        stack.push(child);
      }
  }
}

/**
 * The second line of defence, for texts that left the render's bookkeeping (an API server's
 * message quoting a value it escaped): the value as it is, trimmed, escaped as JSON or Go's %q
 * would, upper- and lower-cased, base64-encoded (how a Secret's data reads), and each line of a
 * multi-line value (a message quotes one line).
 */
function formsOf(text: string): string[] {
  const forms = [text, text.trim(), JSON.stringify(text).slice(1, -1), text.toUpperCase()];
  forms.push(text.toLowerCase(), Buffer.from(text, 'utf8').toString('base64'));
  if (text.includes('\n')) {
    for (const line of text.split('\n')) {
      const trimmed = line.trim();
      if (trimmed.length >= MIN_SUBSTRING_LENGTH) forms.push(trimmed);
    }
  }
  return forms;
}

const WORD = /[\p{L}\p{N}_]/u;
const BASE = 0x01000193;

/** Polynomial hash of `text[start, start+length)` modulo 2^32. */
function hashOf(text: string, start: number, length: number): number {
  let hash = 0;
  for (let i = start; i < start + length; i++)
    hash = (Math.imul(hash, BASE) + text.charCodeAt(i)) >>> 0;
  return hash;
}

/** BASE^(length-1) modulo 2^32, to roll a character out of the window. */
function leadingPower(length: number): number {
  let power = 1;
  for (let i = 1; i < length; i++) power = Math.imul(power, BASE) >>> 0;
  return power;
}

interface Match {
  start: number;
  end: number;
  owner: string;
}

/** The texts of one length, by hash (built the first time a message is long enough for them). */
type LengthIndex = Map<number, string[]>;

/** Replaces Secret-derived texts; {@link Redactor.none} when there is nothing to hide. */
export class Redactor {
  static readonly none = new Redactor(new Map());

  /** Texts by length, so a message is searched only for the lengths it can contain. */
  private readonly byLength = new Map<number, string[]>();
  private readonly indexes = new Map<number, LengthIndex>();
  private readonly lengths: number[];

  /** @param owners each Secret-derived text → the parameter it belongs to */
  private constructor(private readonly owners: ReadonlyMap<string, string>) {
    for (const text of owners.keys()) {
      const group = this.byLength.get(text.length);
      if (group) group.push(text);
      else this.byLength.set(text.length, [text]);
    }
    this.lengths = [...this.byLength.keys()].sort((a, b) => a - b);
  }

  /**
   * A redactor for these Secret-backed parameters (every scalar and key inside a list or map
   * too, in the forms of {@link formsOf}) and for the texts a render derived from them.
   */
  static of(secrets: readonly SecretValue[], derived: TaintedTexts = new Map()): Redactor {
    const owners = new Map<string, string>();
    const add = (text: string, owner: string): void => {
      if (text !== '' && !owners.has(text)) owners.set(text, owner);
    };
    for (const secret of secrets) {
      const texts: string[] = [];
      leaves(secret.value, texts);
      for (const text of texts) for (const form of formsOf(text)) add(form, secret.name);
    }
    for (const [text, owner] of derived) add(text, owner);
    return owners.size === 0 ? Redactor.none : new Redactor(owners);
  }

  /** This redactor and the texts a render derived from Secret data. */
  including(derived: TaintedTexts): Redactor {
    if (derived.size === 0) return this;
    const owners = new Map(this.owners);
    for (const [text, owner] of derived)
      if (text !== '' && !owners.has(text)) owners.set(text, owner);
    return new Redactor(owners);
  }

  /** Whether any value is being hidden. */
  get active(): boolean {
    return this.owners.size > 0;
  }

  redact(text: string): string {
    if (this.owners.size === 0 || text === '') return text;
    const matches: Match[] = [];
    for (const length of this.lengths) {
      if (length > text.length) break;
      this.find(text, length, matches);
    }
    return matches.length === 0 ? text : replaced(text, matches);
  }

  redactProblem(problem: Problem): Problem {
    if (!this.active) return problem;
    return { ...problem, path: this.redact(problem.path), message: this.redact(problem.message) };
  }

  /**
   * Redacts an error's message and stack in place (keeping its class and fields, which callers
   * classify it by), marks it as redacted for {@link loggableMessage}, and returns it.
   */
  redactError<E>(error: E): E {
    if (!(error instanceof Error)) return error;
    if (this.active) {
      error.message = this.redact(error.message);
      if (error.stack) error.stack = this.redact(error.stack);
    }
    redactedErrors.add(error);
    return error;
  }

  /** Rabin–Karp over `text` for the texts of one length. */
  private find(text: string, length: number, matches: Match[]): void {
    const index = this.indexFor(length);
    const power = leadingPower(length);
    let hash = hashOf(text, 0, length);
    for (let start = 0; ; start++) {
      const candidates = index.get(hash);
      if (candidates) {
        for (const candidate of candidates) {
          if (!text.startsWith(candidate, start)) continue;
          if (length < MIN_SUBSTRING_LENGTH && !wholeWord(text, start, start + length)) continue;
          matches.push({ start, end: start + length, owner: this.owners.get(candidate)! });
          break;
        }
      }
      const next = start + length;
      if (next >= text.length) return;
      const out = Math.imul(text.charCodeAt(start), power) >>> 0;
      hash = (Math.imul((hash - out) >>> 0, BASE) + text.charCodeAt(next)) >>> 0;
    }
  }

  private indexFor(length: number): LengthIndex {
    let index = this.indexes.get(length);
    if (index) return index;
    index = new Map();
    for (const text of this.byLength.get(length) ?? []) {
      const hash = hashOf(text, 0, length);
      const bucket = index.get(hash);
      if (bucket) bucket.push(text);
      else index.set(hash, [text]);
    }
    this.indexes.set(length, index);
    return index;
  }
}

function wholeWord(text: string, start: number, end: number): boolean {
  return !WORD.test(text.charAt(start - 1)) && !WORD.test(text.charAt(end));
}

/**
 * `text` with every matched span replaced; overlapping or touching spans become one
 * placeholder (named after the span that starts first, the longest there).
 */
function replaced(text: string, matches: Match[]): string {
  matches.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  let i = 0;
  while (i < matches.length) {
    const first = matches[i]!;
    let end = first.end;
    while (++i < matches.length && matches[i]!.start <= end) end = Math.max(end, matches[i]!.end);
    out += `${text.slice(at, first.start)}[redacted: parameters.${first.owner}]`;
    at = end;
  }
  return out + text.slice(at);
}

const redactedErrors = new WeakSet<Error>();

/**
 * An error's message if a Redactor went over it; otherwise only its class, so that an error
 * raised while Secret data was in hand can never print a value (the work queue logs this).
 */
export function loggableMessage(error: unknown): string {
  if (error instanceof Error) {
    if (redactedErrors.has(error)) return error.message;
    return `${error.name} (message withheld: it was not checked for Secret values)`;
  }
  return 'a non-Error value was thrown (withheld: it was not checked for Secret values)';
}
