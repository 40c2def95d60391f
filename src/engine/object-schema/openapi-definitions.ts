// How the definitions of a Kubernetes OpenAPI v3 document become the built-in bundle's dialect
// (ADR 0029): shared by `npm run generate` (tools/k8s-schemas.ts, from the documents of the
// k8s.io/kubernetes module) and the operator (the documents its API server publishes, ADR 0030).
// The generator refuses what it does not know; the operator leaves it out and says so.
import type { SchemaNode } from './schema-dialect.ts';

/** How a `$ref` of a document starts; the bundle names the definition alone. */
export const REF_PREFIX = '#/components/schemas/';

/** Keywords that validation needs, kept as they are (refs and formats are rewritten). */
const KEPT = new Set(['type', 'properties', 'additionalProperties', 'items', 'required', 'enum']);
/**
 * Keywords that do not change what is valid: documentation, defaults (the API server does not
 * default built-in kinds from OpenAPI), patch and merge hints, the GVK (moved to the index), and
 * unions (checked by the server's Go validation, not by the schema). `x-kubernetes-list-type` is
 * kept as `set` only (server-side apply refuses a duplicate in a set; `map` lists keep their
 * keys, `atomic` says nothing about validity).
 */
const DROPPED = new Set([
  'description',
  'default',
  'x-kubernetes-patch-strategy',
  'x-kubernetes-patch-merge-key',
  'x-kubernetes-map-type',
  'x-kubernetes-unions',
  'x-kubernetes-group-version-kind',
]);
/** Formats, as the bundle writes them: `double` says nothing a JSON number does not. */
const FORMATS: Readonly<Record<string, string | undefined>> = {
  int32: 'int32',
  int64: 'int64',
  byte: 'byte',
  'date-time': 'date-time',
  double: undefined,
};
/**
 * Definitions with their own JSON decoding, written as the bundle's validator understands them
 * (ADR 0029): a quantity is a string in the quantity grammar or a number; an IntOrString an int32
 * or a string; a MicroTime RFC 3339 with exactly six decimals; RawExtension and FieldsV1 hold any
 * JSON object; the apiextensions JSON holders any value.
 */
export const SPECIAL: Readonly<Record<string, SchemaNode>> = {
  'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime': { type: 'string', format: 'micro-time' },
  'io.k8s.apimachinery.pkg.api.resource.Quantity': {
    type: ['string', 'number'],
    format: 'quantity',
  },
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': {
    'x-kubernetes-int-or-string': true,
    format: 'int32',
  },
  'io.k8s.apimachinery.pkg.runtime.RawExtension': {
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
  },
  'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1': {
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
  },
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON': {
    'x-kubernetes-preserve-unknown-fields': true,
  },
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray': {
    'x-kubernetes-preserve-unknown-fields': true,
  },
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool': {
    'x-kubernetes-preserve-unknown-fields': true,
  },
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray': {
    'x-kubernetes-preserve-unknown-fields': true,
  },
};

/**
 * Told of what the dialect does not know, at `where` (a definition and the fields to the node).
 * The generator throws, so a new keyword is decided, not ignored; the operator notes it and goes
 * on with the node as if the keyword were absent, which accepts more, never less.
 */
export type Refuse = (where: string, what: string) => void;

/** `io.k8s.api.core.v1.PodSpec` → `io.k8s.api.core.v1`: the Go package (a bundle file). */
export function packageOf(definition: string): string {
  return definition.slice(0, definition.lastIndexOf('.'));
}

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A schema node reduced to what validation needs; refs name the definition they point to. */
export function compactNode(node: SchemaNode, where: string, refuse: Refuse): SchemaNode {
  if (node.allOf !== undefined)
    return compactNode(withoutAllOf(node, where, refuse), where, refuse);
  const out: SchemaNode = {};
  for (const key of Object.keys(node)) {
    if (!DROPPED.has(key)) compactKeyword(out, node, key, where, refuse);
  }
  if (out.$ref !== undefined && Object.keys(out).length > 1) {
    refuse(where, '$ref with siblings');
    return { $ref: out.$ref };
  }
  return out;
}

/** The documents wrap a property's $ref in a one-entry allOf (to give it a description). */
function withoutAllOf(node: SchemaNode, where: string, refuse: Refuse): SchemaNode {
  const { allOf, ...rest } = node;
  if (Array.isArray(allOf) && allOf.length === 1 && isNode(allOf[0]))
    return { ...rest, ...allOf[0] };
  refuse(where, `allOf with ${Array.isArray(allOf) ? allOf.length : 'no'} entries`);
  return rest;
}

/** Writes `key` of `node` into `out` as the bundle holds it. */
function compactKeyword(
  out: SchemaNode,
  node: SchemaNode,
  key: string,
  where: string,
  refuse: Refuse,
): void {
  const value = node[key];
  if (key === '$ref') out.$ref = String(value).replace(REF_PREFIX, '');
  else if (key === 'format') compactFormat(out, String(value), where, refuse);
  else if (key === 'properties' && isNode(value)) {
    out.properties = Object.fromEntries(
      Object.entries(value).map(([name, child]) => [
        name,
        isNode(child) ? compactNode(child, `${where}.${name}`, refuse) : {},
      ]),
    );
  } else if (key === 'items' || key === 'additionalProperties') {
    out[key] = isNode(value) ? compactNode(value, `${where}.${key}`, refuse) : value;
  } else if (key === 'x-kubernetes-list-map-keys') {
    if (node['x-kubernetes-list-type'] === 'map') out[key] = value;
  } else if (key === 'x-kubernetes-list-type') {
    if (value === 'set') out[key] = value;
  } else if (KEPT.has(key)) out[key] = value;
  else refuse(where, `keyword ${key} is new: decide whether validation needs it`);
}

function compactFormat(out: SchemaNode, format: string, where: string, refuse: Refuse): void {
  if (!Object.hasOwn(FORMATS, format)) refuse(where, `unknown format ${format}`);
  else if (FORMATS[format]) out.format = FORMATS[format];
}

/** A definition as the bundle holds it: its special form, or its schema compacted. */
export function compactDefinition(name: string, schema: SchemaNode, refuse: Refuse): SchemaNode {
  return SPECIAL[name] ?? compactNode(schema, name, refuse);
}

/** The definitions a node refers to. */
export function refsOf(node: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(node)) for (const item of node) refsOf(item, into);
  else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') into.add(value);
      else refsOf(value, into);
    }
  }
  return into;
}

/** One entry of `x-kubernetes-group-version-kind`. */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/**
 * The kinds a definition is the schema of, by apiVersion. None for meta/v1 definitions: their
 * kinds (DeleteOptions, WatchEvent, Status) are request and response bodies of every group.
 */
export function kindsOfDefinition(
  name: string,
  schema: SchemaNode,
): { apiVersion: string; kind: string }[] {
  if (name.startsWith('io.k8s.apimachinery.')) return [];
  const gvks = schema['x-kubernetes-group-version-kind'];
  if (!Array.isArray(gvks)) return [];
  return (gvks as GroupVersionKind[]).map(({ group, version, kind }) => ({
    apiVersion: group ? `${group}/${version}` : version,
    kind,
  }));
}
