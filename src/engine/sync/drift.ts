// What counts as a change to a managed resource (SPEC §7): server-managed metadata, status,
// finalizers and ownerReferences never do, nor does any `ignoreFields` path, whose LIVE value is
// carried into what the operator applies so server-side apply neither resets nor fights it.
import type { KubeObject } from '../../api/object-meta.ts';
import { canonicalJson } from '../shared/canonical-json.ts';
import { isMap } from '../shared/json-map.ts';

type Segment = { key: string } | { index: number } | { all: true };

const SERVER_MANAGED = [
  'resourceVersion',
  'managedFields',
  'generation',
  'uid',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'selfLink',
  'finalizers',
  'ownerReferences',
];

/**
 * Parses an ignoreFields path: dot-separated map keys, `[*]` for every list element, `[N]` for
 * one. Returns undefined for a malformed path.
 */
export function parseFieldPath(path: string): Segment[] | undefined {
  const segments: Segment[] = [];
  for (const part of path.split('.')) {
    const match = /^([^[\]]*)((?:\[(?:\*|\d+)\])*)$/.exec(part);
    if (!match) return undefined;
    if (match[1]) segments.push({ key: match[1] });
    for (const [, index] of (match[2] ?? '').matchAll(/\[(\*|\d+)\]/g)) {
      segments.push(index === '*' ? { all: true } : { index: Number(index) });
    }
    if (!match[1] && !match[2]) return undefined;
  }
  return segments.length > 0 ? segments : undefined;
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Every concrete location a path reaches in `root` (expanding `[*]`), as segment lists. */
function locations(root: unknown, segments: Segment[]): (string | number)[][] {
  let current: { node: unknown; at: (string | number)[] }[] = [{ node: root, at: [] }];
  for (const segment of segments) {
    const next: typeof current = [];
    for (const { node, at } of current) {
      if ('key' in segment && isMap(node) && Object.hasOwn(node, segment.key))
        next.push({ node: node[segment.key], at: [...at, segment.key] });
      else if ('index' in segment && Array.isArray(node) && segment.index < node.length)
        next.push({ node: node[segment.index], at: [...at, segment.index] });
      else if ('all' in segment && Array.isArray(node))
        node.forEach((item, i) => next.push({ node: item, at: [...at, i] }));
    }
    current = next;
  }
  return current.map((c) => c.at);
}

function read(root: unknown, at: (string | number)[]): unknown {
  return at.reduce<unknown>(
    (node, step) => (node as Record<string | number, unknown> | undefined)?.[step],
    root,
  );
}

function write(root: unknown, at: (string | number)[], value: unknown): void {
  const parent = read(root, at.slice(0, -1));
  const last = at[at.length - 1]!;
  if (Array.isArray(parent) && typeof last === 'number') parent[last] = value;
  else if (isMap(parent))
    Object.defineProperty(parent, last, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
}

/** Removes a map entry; a list element is blanked (`placeholder`) so later indexes keep their place. */
function remove(root: unknown, at: (string | number)[], placeholder?: null): void {
  const parent = read(root, at.slice(0, -1));
  const last = at[at.length - 1]!;
  if (isMap(parent)) delete parent[last as string];
  else if (Array.isArray(parent) && placeholder === null) parent[last as number] = null;
}

/** `[*]` in desired and live may differ in length: carry by concrete index on the live side. */
function parentExists(root: unknown, at: (string | number)[]): boolean {
  const parent = read(root, at.slice(0, -1));
  return isMap(parent) || Array.isArray(parent);
}

/**
 * Returns `desired` with every ignored path holding the live value (or absent where live has
 * none), so applying it keeps what someone else set there.
 */
export function carryIgnoredFields(
  desired: KubeObject,
  live: KubeObject | undefined,
  paths: string[],
): KubeObject {
  if (!live || paths.length === 0) return desired;
  const result = clone(desired);
  for (const path of paths) {
    const segments = parseFieldPath(path);
    if (!segments) continue;
    for (const at of locations(result, segments)) remove(result, at);
    for (const at of locations(live, segments)) {
      if (parentExists(result, at)) write(result, at, clone(read(live, at)));
    }
  }
  return result;
}

/** A copy without what never counts as a change, and without the ignored paths. */
export function managedView(
  object: KubeObject,
  ignoreFields: string[] = [],
): Record<string, unknown> {
  const copy = clone(object) as unknown as Record<string, unknown> & {
    metadata?: Record<string, unknown>;
  };
  delete copy.status;
  if (copy.metadata) for (const field of SERVER_MANAGED) delete copy.metadata[field];
  for (const path of ignoreFields) {
    const segments = parseFieldPath(path);
    if (!segments) continue;
    for (const at of locations(copy, segments)) remove(copy, at, null);
  }
  return copy;
}

export function sameManagedState(
  a: KubeObject,
  b: KubeObject,
  ignoreFields: string[] = [],
): boolean {
  return (
    canonicalJson(managedView(a, ignoreFields)) === canonicalJson(managedView(b, ignoreFields))
  );
}

/** The first path (in key order) where two values differ, e.g. `spec.template.spec.containers[0].image`. */
export function firstDifference(a: unknown, b: unknown, path = ''): string | undefined {
  if (canonicalJson(a) === canonicalJson(b)) return undefined;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const diff = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (diff) return diff;
    }
  }
  if (isMap(a) && isMap(b)) {
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      const diff = firstDifference(a[key], b[key], path ? `${path}.${key}` : key);
      if (diff) return diff;
    }
  }
  return path || '(root)';
}

/** The first managed path an update changes, or undefined when it changes nothing managed. */
export function changedManagedPath(
  before: KubeObject,
  after: KubeObject,
  ignoreFields: string[] = [],
): string | undefined {
  return firstDifference(managedView(before, ignoreFields), managedView(after, ignoreFields));
}

/** Whether every field of `wanted` is in `actual` with the same value (lists: same length). */
function covers(actual: unknown, wanted: unknown): boolean {
  if (isMap(wanted))
    return (
      isMap(actual) && Object.entries(wanted).every(([key, value]) => covers(actual[key], value))
    );
  if (Array.isArray(wanted))
    return (
      Array.isArray(actual) &&
      actual.length === wanted.length &&
      wanted.every((value, i) => covers(actual[i], value))
    );
  return actual === wanted;
}

/**
 * Whether the live object still holds every managed field of `desired` as desired: what the API
 * server adds (defaults, status, fields of other managers) is no difference; a changed, removed or
 * re-typed field is. A value the server normalises (`1000m` read back as `1`) counts as a
 * difference, which only costs the dry run that settles it.
 */
export function coveredBy(desired: KubeObject, live: KubeObject): boolean {
  return covers(managedView(live), managedView(desired));
}
