// Checks JSON against the small JSON Schema subset of the built-in bundle: type, enum, format,
// required, properties, additionalProperties, items, $ref by definition name,
// x-kubernetes-list-map-keys and x-kubernetes-list-type `set` (tools/k8s-schemas.ts refuses any
// other keyword), reading null as
// the API server's Go decoding of a built-in kind reads it. It walks the schema
// instead of compiling it: ajv needs 0.3 to 1 s to compile the Deployment schema alone (ADR
// 0029), this needs nothing. Its errors have ajv's shape, so one mapping (object-problems.ts)
// turns both into problems.
import type { ErrorObject, FormatDefinition } from 'ajv';
import { listMapKeysCheck } from '../crd-schema/crd-keywords.ts';
import type { SchemaNode } from './schema-dialect.ts';

/** Where definitions are found by name; a name it lacks is a bug of the bundle. */
export type Definitions = ReadonlyMap<string, SchemaNode>;

type Formats = Readonly<Record<string, FormatDefinition<string> | FormatDefinition<number>>>;

interface Walk {
  definitions: Definitions;
  formats: Formats;
  errors: ErrorObject[];
  /** The path to the value being checked, as JSON pointer segments. */
  at: string[];
}

function pointer(at: string[]): string {
  return at.map((s) => `/${s.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

function fail(
  walk: Walk,
  keyword: string,
  params: Record<string, unknown>,
  data: unknown,
  node: SchemaNode,
): void {
  walk.errors.push({
    keyword,
    instancePath: pointer(walk.at),
    schemaPath: '',
    params,
    data,
    parentSchema: node,
    schema: node[keyword],
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasType(type: string, data: unknown): boolean {
  switch (type) {
    case 'integer':
      return Number.isInteger(data);
    case 'number':
      return typeof data === 'number' && Number.isFinite(data);
    case 'object':
      return isRecord(data);
    case 'array':
      return Array.isArray(data);
    case 'null':
      return data === null;
    default:
      return typeof data === type;
  }
}

const keysChecks = new Map<string, ReturnType<typeof listMapKeysCheck>>();

function checkValue(walk: Walk, node: SchemaNode, data: unknown): void {
  if (typeof node.$ref === 'string') {
    const target = walk.definitions.get(node.$ref);
    if (!target) throw new Error(`the schema bundle has no ${node.$ref}`);
    checkValue(walk, target, data);
    return;
  }
  if (data === null && node.type !== undefined) {
    // Go decodes a null list item as the item type's zero value: an empty object, "", 0, false
    // (a keyed list's null item is refused before, in checkArray).
    if ([node.type].flat().includes('object')) checkValue(walk, node, {});
    return;
  }
  if (node.type !== undefined) {
    const types = [node.type].flat() as string[];
    if (!types.some((t) => hasType(t, data))) {
      fail(walk, 'type', { type: node.type }, data, node);
      return;
    }
  }
  if (Array.isArray(node.enum) && !node.enum.includes(data)) {
    fail(walk, 'enum', { allowedValues: node.enum }, data, node);
  }
  if (typeof node.format === 'string') checkFormat(walk, node, data);
  if (isRecord(data)) checkObject(walk, node, data);
  else if (Array.isArray(data)) checkArray(walk, node, data);
}

function checkFormat(walk: Walk, node: SchemaNode, data: unknown): void {
  const format = walk.formats[node.format as string];
  if (!format) throw new Error(`the schema bundle uses an unknown format ${String(node.format)}`);
  const applies = format.type === undefined || typeof data === format.type;
  if (applies && !(format.validate as (value: unknown) => boolean)(data)) {
    fail(walk, 'format', { format: node.format }, data, node);
  }
}

/**
 * A null member leaves a Go struct field at its zero value, as if absent (`replicas: null` and
 * `creationTimestamp: null` are accepted; a required field that is null is missing), but the
 * strict decoder still reports an unknown field whose value is null.
 */
function checkObject(walk: Walk, node: SchemaNode, data: Record<string, unknown>): void {
  for (const field of (node.required ?? []) as string[]) {
    if (!Object.hasOwn(data, field) || data[field] === null) {
      fail(walk, 'required', { missingProperty: field }, data, node);
    }
  }
  const properties = node.properties as Record<string, SchemaNode> | undefined;
  const additional = node.additionalProperties as SchemaNode | boolean | undefined;
  for (const [field, value] of Object.entries(data)) {
    const declared = properties && Object.hasOwn(properties, field) ? properties[field] : undefined;
    const schema = declared ?? (typeof additional === 'object' ? additional : undefined);
    if (schema && value === null) continue;
    if (schema) {
      walk.at.push(field);
      checkValue(walk, schema, value);
      walk.at.pop();
    } else if (additional === false) {
      fail(walk, 'additionalProperties', { additionalProperty: field }, data, node);
    }
  }
}

function resolved(walk: Walk, node: SchemaNode): SchemaNode {
  return typeof node.$ref === 'string' ? (walk.definitions.get(node.$ref) ?? node) : node;
}

/**
 * Items, then the keys of a keyed list and the values of a set, as server-side apply merges them.
 * It refuses a null item of a keyed list (x-kubernetes-list-map-keys) or of a set
 * (`x-kubernetes-list-type: set`, such as metadata.finalizers): the item has no key to merge by.
 * It refuses two items with the same keys, and a value twice in a set.
 */
function checkArray(walk: Walk, node: SchemaNode, data: unknown[]): void {
  const items = node.items as SchemaNode | undefined;
  const keys = node['x-kubernetes-list-map-keys'] as string[] | undefined;
  const isSet = node['x-kubernetes-list-type'] === 'set';
  if (items) {
    data.forEach((item, index) => {
      walk.at.push(String(index));
      if (item === null && (keys || isSet)) {
        const target = resolved(walk, items);
        fail(walk, 'type', { type: target.type ?? 'object' }, item, target);
      } else checkValue(walk, items, item);
      walk.at.pop();
    });
  }
  if (keys) {
    const id = keys.join('\u0000');
    let check = keysChecks.get(id);
    if (!check) keysChecks.set(id, (check = listMapKeysCheck(keys)));
    for (const { index } of check(data)) {
      fail(walk, 'x-kubernetes-list-map-keys', { index }, data, node);
    }
  }
  if (isSet) {
    const first = new Map<string, number>();
    data.forEach((item, index) => {
      const key = JSON.stringify(item) ?? 'undefined';
      const earlier = first.get(key);
      if (earlier === undefined) first.set(key, index);
      else fail(walk, 'uniqueItems', { i: index, j: earlier }, data, node);
    });
  }
}

/**
 * The errors of `data` against `schema` (empty when valid), every one of them, each with the
 * failing data and schema node as ajv's `verbose` gives them.
 */
export function subsetErrors(
  schema: SchemaNode,
  data: unknown,
  definitions: Definitions,
  formats: Formats,
): ErrorObject[] {
  const walk: Walk = { definitions, formats, errors: [], at: [] };
  checkValue(walk, schema, data);
  return walk.errors;
}
