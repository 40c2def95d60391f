// Keeps Secret values out of every message Stencil writes (conditions, Events, logs, CLI output).
// A Redactor knows the values of the Secret-backed parameters of one evaluation and replaces
// each occurrence of them, and of the forms a message may quote them in, with a placeholder that
// names the parameter. See docs/adr/0007-secret-redaction-and-render-budget.md.
import { Buffer } from 'node:buffer';
import type { JsonValue } from '../api/object-meta.ts';
import type { Problem } from './problem.ts';

/** A Secret-backed parameter: its name and its resolved (typed) value. */
export interface SecretValue {
  name: string;
  value: JsonValue;
}

/**
 * Shorter texts are redacted only as whole words: a substring match would garble every message
 * (a one-character secret "e" is in almost every word), and a secret that short is guessable.
 */
const MIN_SUBSTRING_LENGTH = 4;
/** Above this many distinct forms (a LIST of many Secrets) the longest are kept. */
const MAX_FORMS = 20_000;

function leaves(value: JsonValue, out: string[]): void {
  if (value === null) return;
  if (typeof value === 'string') out.push(value);
  else if (typeof value === 'number' || typeof value === 'boolean') out.push(String(value));
  else if (Array.isArray(value)) for (const item of value) leaves(item, out);
  else for (const item of Object.values(value)) leaves(item, out);
}

/**
 * The ways a message may show `text`: as it is, trimmed, escaped as JSON or Go's %q would,
 * upper- or lower-cased (the `upper`/`lower` helpers), base64-encoded (`b64enc`, and how a
 * Secret's data reads), and each line of a multi-line value (a message quotes one line).
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
  return forms.filter((form) => form !== '');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Replaces Secret values in text; {@link Redactor.none} when there is nothing to hide. */
export class Redactor {
  static readonly none = new Redactor(new Map());

  private readonly pattern: RegExp | undefined;

  /** @param owners each form of a secret text → the parameter it belongs to */
  private constructor(private readonly owners: ReadonlyMap<string, string>) {
    if (owners.size === 0) return;
    // Longest first, so a value is replaced whole rather than through a shorter form inside it.
    const forms = [...owners.keys()].sort((a, b) => b.length - a.length).slice(0, MAX_FORMS);
    const alternatives = forms.map((form) =>
      form.length >= MIN_SUBSTRING_LENGTH
        ? escapeRegExp(form)
        : `(?<![\\p{L}\\p{N}_])${escapeRegExp(form)}(?![\\p{L}\\p{N}_])`,
    );
    this.pattern = new RegExp(alternatives.join('|'), 'gu');
  }

  /** A redactor for these Secret-backed parameters (every scalar inside a list or map too). */
  static of(secrets: readonly SecretValue[]): Redactor {
    const owners = new Map<string, string>();
    for (const secret of secrets) {
      const texts: string[] = [];
      leaves(secret.value, texts);
      for (const text of texts)
        for (const form of formsOf(text)) if (!owners.has(form)) owners.set(form, secret.name);
    }
    return owners.size === 0 ? Redactor.none : new Redactor(owners);
  }

  /** Whether any value is being hidden. */
  get active(): boolean {
    return this.pattern !== undefined;
  }

  redact(text: string): string {
    if (!this.pattern) return text;
    return text.replace(this.pattern, (form) => `[redacted: parameters.${this.owners.get(form)}]`);
  }

  redactProblem(problem: Problem): Problem {
    if (!this.pattern) return problem;
    return { ...problem, path: this.redact(problem.path), message: this.redact(problem.message) };
  }

  /**
   * Redacts an error's message and stack in place (keeping its class and fields, which callers
   * classify it by) and returns it.
   */
  redactError<E>(error: E): E {
    if (!this.pattern || !(error instanceof Error)) return error;
    error.message = this.redact(error.message);
    if (error.stack) error.stack = this.redact(error.stack);
    return error;
  }
}
