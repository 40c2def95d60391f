// Provenance of Secret data through one render: which texts, lists and maps derive from a
// Secret-backed parameter. A helper whose inputs include a tainted value produces a tainted
// result, whatever it computed, so a message that quotes any of it can be redacted (see
// redaction.ts and docs/adr/0016-redaction-by-provenance.md). Values are never wrapped: the
// template sees exactly the values it always did, and `{{#if}}` still tests them.
import type { TaintedTexts } from './redaction.ts';

export class Taint {
  /** Tainted text → the parameter it derives from (the first one, when several). */
  readonly texts = new Map<string, string>();
  /** Lists and maps that are, or contain, Secret data. */
  private readonly containers = new WeakMap<object, string>();

  /**
   * Taints the values of these Secret-backed parameters (every scalar inside, and the lists and
   * maps that hold them), and the context and its map of parameters, which then contain them
   * (`{{toYaml parameters}}` writes them out).
   */
  static of(context: { parameters: Record<string, unknown> }, secret: readonly string[]): Taint {
    const taint = new Taint();
    const { parameters } = context;
    for (const name of secret) {
      if (!Object.hasOwn(parameters, name)) continue;
      taint.add(parameters[name], name);
      for (const root of [parameters, context])
        if (!taint.containers.has(root)) taint.containers.set(root, name);
    }
    return taint;
  }

  /** Which parameter `value` derives from, when it is tainted. */
  ownerOf(value: unknown): string | undefined {
    if (typeof value === 'string') return this.texts.get(value);
    if (typeof value === 'number' || typeof value === 'boolean')
      return this.texts.get(String(value));
    if (typeof value === 'object' && value !== null) {
      const own = this.containers.get(value);
      if (own !== undefined || !isSafeString(value)) return own;
      return this.texts.get(value.toHTML());
    }
    return undefined;
  }

  /**
   * After a helper ran: when one of its arguments was tainted, so is its result, whatever it is
   * (a text, the text of a SafeString, each text of a list it built, a boolean or a count: a
   * `default` that a tainted boolean chose is tainted too). Over-approximate on purpose: a
   * message may show `[redacted]` for a word such as `true`, never a value derived from a Secret.
   */
  propagate(args: readonly unknown[], result: unknown): void {
    if (this.texts.size === 0) return;
    let owner: string | undefined;
    for (const arg of args) {
      owner = this.ownerOf(arg);
      if (owner !== undefined) break;
    }
    if (owner !== undefined) this.add(result, owner);
  }

  /** The tainted texts, for the redactor of the evaluation. */
  get derived(): TaintedTexts {
    return this.texts;
  }

  /** Taints `value` and everything inside it, without recursion. */
  private add(value: unknown, owner: string): void {
    const stack: unknown[] = [value];
    while (stack.length > 0) {
      const item = stack.pop();
      if (typeof item === 'string') this.text(item, owner);
      else if (typeof item === 'number' || typeof item === 'boolean')
        this.text(String(item), owner);
      else if (typeof item === 'object' && item !== null) {
        if (this.containers.has(item)) continue;
        if (isSafeString(item)) {
          // YAML text a helper wrote from tainted input.
          this.text(item.toHTML(), owner);
          continue;
        }
        this.containers.set(item, owner);
        if (Array.isArray(item)) for (const child of item) stack.push(child);
        else
          for (const [key, child] of Object.entries(item)) {
            // Its keys are Secret data too: `{{#each pw}}{{@key}}{{/each}}` writes them out.
            this.text(key, owner);
            stack.push(child);
          }
      }
    }
  }

  private text(text: string, owner: string): void {
    if (text !== '' && !this.texts.has(text)) this.texts.set(text, owner);
  }
}

/** A Handlebars SafeString (helper YAML), told apart without importing the environment. */
function isSafeString(value: object): value is { toHTML(): string } {
  return typeof (value as { toHTML?: unknown }).toHTML === 'function';
}
