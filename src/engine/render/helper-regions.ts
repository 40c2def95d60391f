// Where the YAML text of helpers (quote, squote, toJson, toYaml, indent/nindent of those) landed
// in a rendered output, and the structural check that it cannot have changed the YAML around it:
// each region is whole YAML nodes, or else it is neutralised and the output must parse to the
// same structure without it (docs/adr/0011-render-helper-regions.md).
import {
  isAlias,
  isCollection,
  isMap,
  isPair,
  isScalar,
  isSeq,
  parseAllDocuments,
  visit,
  type Document,
  type LineCounter,
  type Node,
} from 'yaml';

/** Opens a region: followed by its id in decimal digits and {@link REGION_ID_END}. */
const REGION_OPEN = '\uE002';
const REGION_ID_END = '\uE003';
const REGION_CLOSE = '\uE004';
const REGION_MARK = /\uE002(\d+)\uE003|\uE004/g;
/**
 * Every private-use character the renderer reserves: value markers (U+E000–U+E001), region
 * markers (U+E002–U+E004) and the attribution marks of `observed` reads (U+E005–U+E006).
 */
export const RESERVED = /[\uE000-\uE006]/;

/** What the renderer records when a helper's YAML text is inserted. */
export interface HelperRegion {
  /** The outermost helper of the mustache (`nindent` for `{{nindent 4 (toYaml x)}}`). */
  helper: string;
  /** Position of the mustache in the template, as `line L, column C`. */
  at: string;
}

/** A region in the text the YAML parser sees: [start, end) in UTF-16 code units. */
export interface RegionSpan {
  region: number;
  start: number;
  end: number;
}

/** Wraps a helper's text in the markers of region `id`. */
export function markRegion(id: number, text: string): string {
  return `${REGION_OPEN}${id}${REGION_ID_END}${text}${REGION_CLOSE}`;
}

/** Characters `markRegion` adds around the text of region `id`. */
export function regionMarkup(id: number): number {
  return String(id).length + 3;
}

/**
 * Removes the region markers. Returns undefined when they are not exactly what the renderer
 * wrote (each id once, opened then closed, never nested): a value forged one.
 */
export function extractRegions(
  marked: string,
  count: number,
): { text: string; spans: RegionSpan[] } | undefined {
  const spans: RegionSpan[] = [];
  const seen = new Set<number>();
  let text = '';
  let last = 0;
  let open: RegionSpan | undefined;
  for (const match of marked.matchAll(REGION_MARK)) {
    text += marked.slice(last, match.index);
    last = match.index + match[0].length;
    if (match[1] !== undefined) {
      const id = Number(match[1]);
      if (open || id >= count || seen.has(id)) return undefined;
      seen.add(id);
      open = { region: id, start: text.length, end: text.length };
    } else {
      if (!open) return undefined;
      open.end = text.length;
      spans.push(open);
      open = undefined;
    }
  }
  if (open) return undefined;
  text += marked.slice(last);
  return { text, spans };
}

// ---------------------------------------------------------------------------------------------
// Nodes and where they are

const isSpace = (ch: string): boolean => ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r';

function trimEnd(text: string, end: number, floor: number): number {
  while (end > floor && isSpace(text.charAt(end - 1))) end--;
  return end;
}

/** Where a node's own text ends: block scalars and block collections include the line breaks
 *  (and comments) after them in their range, which no helper's text does. */
function endOf(node: Node, text: string): number {
  if (isCollection(node) && !node.flow) {
    let end = node.range?.[0] ?? 0;
    for (const item of node.items) {
      const parts = isPair(item) ? [item.key, item.value] : [item];
      for (const part of parts) {
        if (part && typeof part === 'object' && 'range' in part) {
          end = Math.max(end, endOf(part as Node, text));
        }
      }
    }
    return end;
  }
  const [start, end] = node.range ?? [0, 0];
  return trimEnd(text, end, start);
}

interface Item {
  start: number;
  end: number;
  owner: Node;
  index: number;
}

interface Layout {
  /** Nodes by the offset they start at. */
  nodes: Map<number, Node[]>;
  /** Entries of maps and items of lists by the offset they start at. */
  items: Map<number, Item[]>;
  /** Entries and items of each collection, in order. */
  children: Map<Node, Item[]>;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Where a list item starts: at its `-` in a block list (the node itself starts after it). */
function itemStart(seq: Node, node: Node, index: number, text: string): number {
  const start = node.range?.[0] ?? 0;
  if (!isSeq(seq) || seq.flow) return start;
  if (index === 0) return seq.range?.[0] ?? start;
  let at = start - 1;
  while (at >= 0 && (text.charAt(at) === ' ' || text.charAt(at) === '\t')) at--;
  return text.charAt(at) === '-' ? at : start;
}

/** Where an entry of a map or an item of a list starts and ends. */
function itemOf(owner: Node, entry: unknown, index: number, text: string): Item | undefined {
  if (isPair(entry)) {
    const key = entry.key as Node | null;
    const value = entry.value as Node | null;
    const first = key?.range ? key : value;
    if (!first?.range) return undefined;
    const end = Math.max(key ? endOf(key, text) : 0, value ? endOf(value, text) : 0);
    return { start: first.range[0], end, owner, index };
  }
  if (!entry || typeof entry !== 'object' || !('range' in entry)) return undefined;
  const child = entry as Node;
  return { start: itemStart(owner, child, index, text), end: endOf(child, text), owner, index };
}

function layoutOf(docs: readonly Document.Parsed[], text: string): Layout {
  const layout: Layout = { nodes: new Map(), items: new Map(), children: new Map() };
  const add = (node: Node): void => {
    if (node.range) push(layout.nodes, node.range[0], node);
    if (!isMap(node) && !isSeq(node)) return;
    const items: Item[] = [];
    for (const [index, entry] of (node.items as unknown[]).entries()) {
      const item = itemOf(node, entry, index, text);
      if (!item) continue;
      items.push(item);
      push(layout.items, item.start, item);
    }
    layout.children.set(node, items);
  };
  for (const doc of docs) {
    visit(doc, {
      Node(_key, node) {
        add(node);
      },
    });
  }
  return layout;
}

/** Whether [start, end) is exactly one node, or exactly a run of entries of one map or list. */
function isWhole(layout: Layout, text: string, start: number, end: number): boolean {
  for (const node of layout.nodes.get(start) ?? []) {
    // No helper writes an alias; one standing alone would repeat what the template anchored.
    if (!isAlias(node) && endOf(node, text) === end) return true;
  }
  for (const first of layout.items.get(start) ?? []) {
    const siblings = layout.children.get(first.owner) ?? [];
    let last: Item | undefined;
    for (let i = siblings.indexOf(first); i < siblings.length; i++) {
      const item = siblings[i]!;
      if (item.start >= end) break;
      if (item.end > end) break;
      last = item;
    }
    if (last?.end === end) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// The check

/** One line per node: what it is, where it starts and ends. Equal lists = equal structure. */
function structureOf(docs: readonly Document.Parsed[]): string[] {
  const lines: string[] = [];
  for (const doc of docs) {
    lines.push(`doc ${doc.range.join(',')} ${doc.errors.length}`);
    visit(doc, {
      Node(key, node) {
        const kind = isScalar(node)
          ? `scalar ${node.type ?? ''}`
          : isAlias(node)
            ? 'alias'
            : `${isMap(node) ? 'map' : 'list'}${node.flow ? ' flow' : ''}`;
        lines.push(`${String(key)} ${kind} ${node.range?.join(',') ?? ''}`);
      },
      Pair(key) {
        lines.push(`${String(key)} pair`);
      },
    });
  }
  return lines;
}

/** The offset in the text where two structures first differ (the start of the node there). */
function firstDifference(a: string[], b: string[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] === b[i]) continue;
    const range = /(\d+),\d+,\d+$/.exec(a[i] ?? b[i] ?? '');
    return range ? Number(range[1]) : 0;
  }
  return 0;
}

/** A region and where it went wrong, for the message. */
export interface RegionFault {
  region: number;
  /** Offset in the text (the region's first character, or where the structure differs). */
  offset: number;
}

/**
 * Checks that no helper region changed the structure of the parsed output `docs` (of `text`):
 *
 * - a region whose text (without surrounding whitespace) is exactly one node, or exactly a run
 *   of entries of one map or items of one list, is YAML the helper wrote as a whole: `k: {{toJson
 *   x}}`, `{{nindent 4 (toYaml x)}}` under a key, `{{indent 4 (toYaml x)}}` among other entries.
 *   It started a node where the template had one start and ended where the template went on, so
 *   nothing around it was read differently;
 * - any other region is neutralised: every character but the space becomes `x` (same length, one
 *   line, no YAML indicator), the text is parsed again, and both parses must have the same nodes
 *   at the same offsets. The structure is then the template's own with the helper's text as an
 *   opaque word, whatever the value was: inside a scalar, a block scalar or a comment it passes;
 *   anything that ended, extended or split a scalar, opened a key or a comment, is caught.
 *
 * Returns the first region at fault, or undefined.
 */
export function checkRegions(
  text: string,
  docs: readonly Document.Parsed[],
  spans: readonly RegionSpan[],
  version: '1.1' | '1.2',
): RegionFault | undefined {
  if (spans.length === 0) return undefined;
  const layout = layoutOf(docs, text);
  const neutral: { span: RegionSpan; start: number; end: number }[] = [];
  for (const span of spans) {
    let start = span.start;
    while (start < span.end && isSpace(text.charAt(start))) start++;
    const end = trimEnd(text, span.end, start);
    if (start < end && isWhole(layout, text, start, end)) continue;
    neutral.push({ span, start, end });
  }
  if (neutral.length === 0) return undefined;
  // Not uniqueKeys: two neutralised keys may read the same; only the structure is compared.
  const plain = neutralised(text, neutral);
  const expected = structureOf(parseAllDocuments(plain, { version }) as Document.Parsed[]);
  const actual = structureOf(docs);
  if (expected.length === actual.length && expected.every((line, i) => line === actual[i])) {
    return undefined;
  }
  const at = firstDifference(actual, expected);
  // The region the difference comes from: the last one that starts at or before it.
  const culprit = neutral.filter((n) => n.start <= at).at(-1) ?? neutral[0]!;
  return { region: culprit.span.region, offset: culprit.start };
}

/** `text` with every character of the regions' text but the space turned into `x`. */
function neutralised(text: string, spans: readonly { start: number; end: number }[]): string {
  let plain = '';
  let last = 0;
  for (const { start, end } of spans) {
    plain += text.slice(last, start) + text.slice(start, end).replace(/[^ ]/g, 'x');
    last = end;
  }
  return plain + text.slice(last);
}

/**
 * The region a parse error at `offset` is attributed to: the one that contains it, else the
 * first one on its line (the parser often reports the start of the key or scalar it broke),
 * else, when the text parses once every region is neutralised (so the regions broke it), the
 * last region before the error (an unclosed quote is reported where the text ends).
 */
export function regionAt(
  text: string,
  spans: readonly RegionSpan[],
  offset: number,
  lineCounter: LineCounter,
  version: '1.1' | '1.2',
): RegionSpan | undefined {
  const containing = spans.filter((s) => s.start <= offset && offset <= s.end).at(-1);
  if (containing) return containing;
  const line = lineCounter.linePos(offset).line;
  const onLine = spans.find(
    (s) => lineCounter.linePos(s.start).line <= line && line <= lineCounter.linePos(s.end).line,
  );
  if (onLine || spans.length === 0) return onLine;
  const docs = parseAllDocuments(neutralised(text, spans), { version }) as Document.Parsed[];
  if (docs.some((d) => d.errors.length > 0)) return undefined;
  return spans.filter((s) => s.start <= offset).at(-1) ?? spans[0];
}
