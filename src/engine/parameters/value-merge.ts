// Combining an instance's structured value with the Template default (ADR 0013): `replace`,
// `deep` (Helm's map merge) and `union-by-key` (a list of maps merged item by item on a key).
// Every map built here has a null prototype, so keys such as `__proto__` are plain data.
import { InstanceReason } from '../../api/condition.ts';
import type { JsonValue } from '../../api/object-meta.ts';
import type { MergeStrategy } from '../../api/template.ts';
import { failure, success, type Outcome } from '../shared/problem.ts';
import { isJsonObject as isMap } from '../shared/json-map.ts';

/**
 * Deepest nesting a merged value may reach (either input, counting maps and lists). Merging is
 * recursive, so without a bound a hostile value could exhaust the stack; real configuration is
 * far shallower.
 */
export const MAX_MERGE_DEPTH = 64;

type JsonMap = { [key: string]: JsonValue };

export interface MergeInput {
  /** Parameter name, for the problem's path and message. */
  name: string;
  strategy: MergeStrategy;
  /** The field naming each item; required for `union-by-key`. */
  mergeKey?: string;
  /** The Template default, typed. */
  base: JsonValue;
  /** The instance's value, typed. */
  override: JsonValue;
  /** The override came from a Secret: messages must not quote its keys. */
  secret?: boolean;
}

/** A merge refused for bad input; `message` never quotes a value. */
class MergeError extends Error {}

function newMap(): JsonMap {
  return Object.create(null) as JsonMap;
}

function put(map: JsonMap, key: string, value: JsonValue): void {
  // defineProperty, not assignment: `map[key] = v` with key "__proto__" would be a prototype
  // write on an ordinary object; here it is an own data property whatever the key.
  Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
}

function tooDeep(depth: number): void {
  if (depth > MAX_MERGE_DEPTH)
    throw new MergeError(`nests deeper than ${MAX_MERGE_DEPTH} levels (the merge limit)`);
}

/** A copy made of null-prototype maps, checked against the depth limit. */
function copy(value: JsonValue, depth: number): JsonValue {
  if (Array.isArray(value)) {
    tooDeep(depth + 1);
    return value.map((item) => copy(item, depth + 1));
  }
  if (isMap(value)) {
    tooDeep(depth + 1);
    const out = newMap();
    for (const key of Object.keys(value)) put(out, key, copy(value[key]!, depth + 1));
    return out;
  }
  return value;
}

/**
 * Helm's map merge: keys of both, the override's value winning; two maps under one key merge
 * recursively; lists and scalars are replaced whole; a `null` in the override removes the key.
 */
function deepMerge(base: JsonValue, override: JsonValue, depth: number): JsonValue {
  if (!isMap(base) || !isMap(override)) return copy(override, depth);
  tooDeep(depth + 1);
  const out = newMap();
  for (const key of Object.keys(base)) put(out, key, copy(base[key]!, depth + 1));
  for (const key of Object.keys(override)) {
    const value = override[key]!;
    if (value === null) delete out[key];
    else if (Object.hasOwn(out, key)) put(out, key, deepMerge(out[key]!, value, depth + 1));
    else put(out, key, copy(value, depth + 1));
  }
  return out;
}

/** An item's key as a string that keeps types apart (`1` and `"1"` are different keys). */
function keyOf(item: JsonValue, field: string, side: string, index: number): string {
  const key = isMap(item) && Object.hasOwn(item, field) ? item[field]! : undefined;
  if (key === undefined || key === null || typeof key === 'object') {
    throw new MergeError(
      `${side} item ${index} ${isMap(item) ? `has no scalar "${field}" (the mergeKey)` : 'is not a map (union-by-key merges lists of maps)'}`,
    );
  }
  return JSON.stringify(key);
}

function indexByKey(
  items: readonly JsonValue[],
  field: string,
  side: string,
  secret: boolean,
): Map<string, number> {
  const index = new Map<string, number>();
  for (const [i, item] of items.entries()) {
    const key = keyOf(item, field, side, i);
    if (index.has(key)) {
      const first = index.get(key)!;
      throw new MergeError(
        // A Secret's keys are part of its value: say which items, not what their key was.
        secret
          ? `${side} items ${first} and ${i} have the same "${field}"`
          : `${side} items ${first} and ${i} have the same "${field}" ${key}`,
      );
    }
    index.set(key, i);
  }
  return index;
}

/**
 * The default's items in their order, each merged deep with the instance's item of the same key;
 * then the instance's new items in its order.
 */
function unionByKey(
  base: JsonValue,
  override: JsonValue,
  field: string,
  secret: boolean,
): JsonValue {
  if (!Array.isArray(base)) return copy(override, 0);
  if (!Array.isArray(override)) return copy(override, 0);
  tooDeep(1);
  const baseIndex = indexByKey(base, field, 'the default', false);
  const overrideIndex = indexByKey(override, field, 'the value', secret);
  const out: JsonValue[] = [];
  for (const [key, i] of baseIndex) {
    const j = overrideIndex.get(key);
    out.push(j === undefined ? copy(base[i]!, 1) : deepMerge(base[i]!, override[j]!, 1));
  }
  for (const [key, j] of overrideIndex) if (!baseIndex.has(key)) out.push(copy(override[j]!, 1));
  return out;
}

/**
 * Combines `override` with `base` as `strategy` says. Deterministic: the result depends only on
 * the two values (key order: the default's keys first, then the instance's new ones). Fails
 * with InvalidParameter, naming the parameter, when a union-by-key item has no usable key, when
 * two items of one list share a key, or when either value nests deeper than
 * {@link MAX_MERGE_DEPTH}.
 */
export function mergeParameterValue(input: MergeInput): Outcome<JsonValue> {
  try {
    switch (input.strategy) {
      case 'replace':
        // Today's behaviour, unchanged (no copy, so no depth limit either).
        return success(input.override);
      case 'deep':
        return success(deepMerge(input.base, input.override, 0));
      case 'union-by-key':
        return success(
          unionByKey(input.base, input.override, input.mergeKey ?? '', input.secret ?? false),
        );
    }
  } catch (error) {
    if (!(error instanceof MergeError)) throw error;
    return failure([
      {
        path: `parameters.${input.name}`,
        reason: InstanceReason.InvalidParameter,
        message: `parameter "${input.name}": cannot merge (${input.strategy}): ${error.message}`,
      },
    ]);
  }
}
