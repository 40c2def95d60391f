// Mutations of valid built-in objects that ask the schema questions of ADR 0029, for the
// differential test against the API server (object-schema-differential.test.ts). Each mutated
// object differs from its valid base in one place. The base objects are walked beside their
// schema, read straight from the bundle (not through the validator under test), so each mutation
// knows what it changes: a leaf's type, a field name, a required field, an enum, an int-or-string,
// a quantity, base64 bytes or a date-time. Values are chosen so that Go validation has nothing more
// to say than the schema: int-or-string and quantity values that the schema accepts are ones the
// field's Go validation accepts too (a port name where a port goes, requests within limits).
// Where that cannot be (a null or an empty enum value Go validation wants filled, an atomic list
// with an item twice), the test's named rules say which difference is allowed.
import { fc } from '@fast-check/vitest';
import type { SchemaFileReader } from '../../../src/engine/object-schema/kubernetes-schemas.ts';

export type Json = Record<string, unknown>;
export type Path = (string | number)[];
type SchemaNode = Record<string, unknown>;

/** What was done to the base object; the differential test counts and classifies by it. */
export type MutationName =
  | 'none'
  | 'type'
  | 'null'
  | 'rename'
  | 'add-unknown'
  | 'drop-required'
  | 'duplicate'
  | 'enum'
  | 'empty-enum'
  | 'int-or-string'
  | 'quantity'
  | 'base64'
  | 'date-time';

export interface MutatedObject {
  kind: string;
  mutation: MutationName;
  /** The field changed, as the API server writes paths: `spec.template.spec.containers[0].image`. */
  path: string;
  /** The same path as keys and indexes. */
  at: Path;
  /** Whether the schema lists the field in its object's `required`. */
  required: boolean;
  /** What was done there, e.g. `integer → string "3"` or `renamed to "Image"`. */
  change: string;
  object: Json;
}

/** The schemas of the bundle's definitions, by name, read on first use. */
export class BundleSchemas {
  readonly #read: SchemaFileReader;
  readonly #definitions = new Map<string, SchemaNode>();
  readonly #kinds: Record<string, { kinds: Record<string, string> }>;

  constructor(read: SchemaFileReader) {
    this.#read = read;
    this.#kinds = (
      JSON.parse(read('index.json')) as {
        groupVersions: Record<string, { kinds: Record<string, string> }>;
      }
    ).groupVersions;
  }

  /** The schema of a kind's root object. */
  root(apiVersion: string, kind: string): SchemaNode {
    const name = this.#kinds[apiVersion]?.kinds[kind];
    if (!name) throw new Error(`the bundle has no ${apiVersion} ${kind}`);
    return this.resolve({ $ref: name });
  }

  /** A node with its $ref followed. */
  resolve(node: SchemaNode): SchemaNode {
    let current = node;
    while (typeof current.$ref === 'string') current = this.#definition(current.$ref);
    return current;
  }

  #definition(name: string): SchemaNode {
    if (!this.#definitions.has(name)) {
      const file = `${name.slice(0, name.lastIndexOf('.'))}.json`;
      const definitions = JSON.parse(this.#read(file)) as Record<string, SchemaNode>;
      for (const [n, d] of Object.entries(definitions)) this.#definitions.set(n, d);
    }
    const found = this.#definitions.get(name);
    if (!found) throw new Error(`the bundle has no ${name}`);
    return found;
  }
}

/** One place of a base object, with its schema. */
interface Site {
  path: Path;
  /** The schema there, $ref followed. */
  node: SchemaNode;
  value: unknown;
  /** A field of a struct, an entry of a map (labels, data, limits), an item of a list. */
  holder: 'root' | 'struct' | 'map' | 'list';
  /** The schema of the object holding the field (for struct fields and map entries). */
  parent?: SchemaNode;
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStruct(node: SchemaNode): boolean {
  return node.properties !== undefined && node.additionalProperties === undefined;
}

function sitesOf(object: Json, schemas: BundleSchemas): Site[] {
  const sites: Site[] = [];
  const visit = (
    value: unknown,
    schema: SchemaNode,
    path: Path,
    holder: Site['holder'],
    parent?: SchemaNode,
  ): void => {
    const node = schemas.resolve(schema);
    sites.push({ path, node, value, holder, parent });
    if (Array.isArray(value)) {
      const items = node.items as SchemaNode | undefined;
      if (!items) throw new Error(`no item schema at ${fieldPath(path)}`);
      value.forEach((item, i) => visit(item, items, [...path, i], 'list'));
    } else if (isRecord(value)) {
      const properties = (node.properties ?? {}) as Record<string, SchemaNode>;
      const additional = node.additionalProperties as SchemaNode | undefined;
      for (const [key, child] of Object.entries(value)) {
        if (Object.hasOwn(properties, key)) {
          visit(child, properties[key]!, [...path, key], 'struct', node);
        } else if (typeof additional === 'object') {
          visit(child, additional, [...path, key], 'map', node);
        } else throw new Error(`the base object has an undeclared field at ${fieldPath(path)}`);
      }
    }
  };
  visit(object, schemas.root(object.apiVersion as string, object.kind as string), [], 'root');
  return sites;
}

/** `spec.containers[0].ports[1].name`; a map key that is not a plain word goes in brackets. */
export function fieldPath(path: Path): string {
  return path.reduce<string>((text, key) => {
    if (typeof key === 'number') return `${text}[${key}]`;
    if (!/^[A-Za-z_$][\w$-]*$/.test(key)) return `${text}[${key}]`;
    return text ? `${text}.${key}` : key;
  }, '');
}

function isRequired(site: Site): boolean {
  const field = site.path.at(-1);
  return site.holder === 'struct' && ((site.parent?.required ?? []) as unknown[]).includes(field);
}

/** Identity of the object: the dry run's URL names it, so it is never mutated. */
const IDENTITY = new Set(['apiVersion', 'kind', 'metadata', 'metadata.name', 'metadata.namespace']);

function isIdentity(site: Site): boolean {
  return IDENTITY.has(site.path.join('.'));
}

function setAt(object: Json, path: Path, value: unknown): void {
  const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Json)[key], object);
  (parent as Json)[path.at(-1)!] = value;
}

function deleteAt(object: Json, path: Path): void {
  const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Json)[key], object);
  delete (parent as Json)[path.at(-1) as string];
}

function renameAt(object: Json, path: Path, name: string): void {
  const parent = path
    .slice(0, -1)
    .reduce<unknown>((node, key) => (node as Json)[key], object) as Json;
  const old = path.at(-1) as string;
  // Keep the field order, so only the name differs.
  const entries = Object.entries(parent).map(([k, v]) => [k === old ? name : k, v] as const);
  for (const key of Object.keys(parent)) delete parent[key];
  for (const [k, v] of entries) parent[k] = v;
}

interface Change {
  change: string;
  value: unknown;
}

const show = (value: unknown): string => JSON.stringify(value) ?? String(value);

function typeOf(node: SchemaNode): string {
  if (node['x-kubernetes-int-or-string'] === true) return 'int-or-string';
  if (node.format === 'quantity') return 'quantity';
  return [node.type].flat().map(String).join('|');
}

/**
 * Values of another JSON type than the schema's: each one a type error for the API server and
 * for the offline check. An int-or-string or a quantity takes a number and a string alike, so
 * only the other types go there (their good values have their own mutations).
 */
function wrongTypes(site: Site): Change[] {
  const { node, value } = site;
  const type = typeOf(node);
  const to = (what: string, v: unknown): Change => ({
    change: `${type} → ${what} ${show(v)}`,
    value: v,
  });
  switch (type) {
    case 'int-or-string':
      return [to('fraction', 1.5), to('boolean', true), to('object', {}), to('array', [8080])];
    case 'quantity':
      return [to('boolean', false), to('object', {}), to('array', ['1'])];
    case 'string':
      return [
        to('integer', 7),
        to('number', 1.5),
        to('boolean', true),
        to('object', { value }),
        to('array', [value]),
      ];
    case 'integer': {
      const n = value as number;
      const changes = [
        to('string', String(n)),
        to('boolean', n !== 0),
        to('fraction', n + 0.5),
        to('object', {}),
        to('array', [n]),
      ];
      if (node.format === 'int32')
        changes.push(to('int32 overflow', 2 ** 31), to('int32 underflow', -(2 ** 31) - 1));
      if (node.format === 'int64') changes.push(to('int64 overflow', 2 ** 63));
      return changes;
    }
    case 'number':
      return [to('string', String(value)), to('boolean', true), to('object', {})];
    case 'boolean':
      return [to('string', String(value)), to('integer', value ? 1 : 0), to('object', {})];
    case 'object':
      return [
        to('array', [value]),
        to('empty array', []),
        to('string', 'x'),
        to('integer', 1),
        to('boolean', true),
      ];
    case 'array': {
      const changes = [to('object', {}), to('string', 'x'), to('integer', 1)];
      const first = (value as unknown[])[0];
      if (first !== undefined && !Array.isArray(first)) changes.push(to('its first item', first));
      return changes;
    }
    default:
      throw new Error(`no wrong types for a schema of type ${type} at ${fieldPath(site.path)}`);
  }
}

/**
 * Names the schema does not declare beside `declared`: case variants (the API server's decoding is
 * case-sensitive), near misses and plain unknown names.
 */
function unknownNames(name: string, declared: SchemaNode): string[] {
  const properties = (declared.properties ?? {}) as Json;
  const candidates = [
    name.charAt(0).toUpperCase() + name.slice(1),
    name.toUpperCase(),
    name.toLowerCase(),
    `${name}s`,
    name.slice(0, -1),
    `${name}_`,
    `x-${name}`,
    ` ${name}`,
    'zzUnknown',
  ];
  return [...new Set(candidates)].filter(
    (c) => c !== '' && c !== name && !Object.hasOwn(properties, c),
  );
}

/** Strings outside an enum: case variants, padding, a near miss, a word. */
function outsideEnum(value: string, allowed: unknown[]): string[] {
  const candidates = [
    value.toLowerCase(),
    value.toUpperCase(),
    ` ${value}`,
    `${value} `,
    `${value}x`,
    'Unknown',
    'none',
  ];
  return [...new Set(candidates)].filter((c) => c !== '' && !allowed.includes(c));
}

/**
 * int-or-string values: a fraction, a boolean or an integer beyond int32 fail the schema; the good
 * ones are good for the field's Go validation too: a port number or IANA name; a count or a
 * percentage that is not zero, so a rolling update keeps maxSurge or maxUnavailable above 0,
 * except a DaemonSet's maxSurge, which must be zero beside its maxUnavailable of 1.
 */
function intOrStringValues(kind: string, site: Site): Change[] {
  const field = site.path.at(-1);
  const good: unknown[] =
    kind === 'DaemonSet' && field === 'maxSurge'
      ? [0, '0%']
      : field === 'maxSurge' || field === 'maxUnavailable'
        ? [1, 3, '10%', '50%', '100%']
        : [1, 80, 65535, 'http', 'web-api', 'h2c'];
  const bad: unknown[] = [1.5, -0.5, true, false, 2 ** 31, -(2 ** 31) - 1, {}, [1], ['http']];
  return [...good, ...bad].map((v) => ({ change: `int-or-string ${show(v)}`, value: v }));
}

/**
 * Quantity values. Good ones fit the Go validation of the place: a container's requests stay
 * below the base objects' limits (and may be zero: `-`, `.`, `+` and `Gi` are zero to
 * ParseQuantity), its limits above its requests, anything else (a volume's storage, a size limit,
 * a metric target) is a positive size. Bad ones are not in the grammar ParseQuantity reads (or not
 * a string or number at all).
 */
function quantityValues(site: Site): Change[] {
  const where = site.path.map(String);
  const resource = where.at(-1);
  const good: unknown[] = where.includes('limits')
    ? ['1Ti', '1e15', 1e15, ' 2Pi', '4Ei', '1.5E']
    : where.includes('requests') && resource !== 'storage'
      ? ['1m', '10m', '0.01', 0.01, '1e-3', '+5m', '.5m', '5.m', ' 2m ', '-', '.', '+', 'Gi', 0]
      : ['1Gi', '500M', '1.5Gi', 2e9, '1e9', '0.5Ti', '2k', '3E6'];
  const bad: unknown[] = [
    '1gi',
    '1K',
    '1 Gi',
    'abc',
    '',
    ' ',
    '1e',
    '5mm',
    '1.2.3',
    '0x10',
    '1,5',
    'Infinity',
    '1e99999999999999999999',
    '--1',
    '1Gi ms',
  ];
  return [...good, ...bad].map((v) => ({ change: `quantity ${show(v)}`, value: v }));
}

const BASE64: unknown[] = [
  '',
  'YQ==',
  'YWI=',
  'YWJj',
  'YW\nJj',
  'YWJj\r\n',
  'YQ',
  'YWI',
  'Y===',
  'YW Jj',
  'YQ-_',
  '@@@@',
  'YWJj\t',
  '=YWJ',
  'YWJj====',
];

const DATE_TIMES: unknown[] = [
  '2026-01-02T15:04:05Z',
  '2024-02-29T23:59:59.999+05:30',
  '2026-01-02T15:04:05,5Z',
  '2026-01-02T15:04:05.123456789-07:00',
  '2026-01-02T15:04:05+24:00',
  '2026-01-02T15:04:05-23:59',
  '2026-01-02',
  '2026-01-02t15:04:05z',
  '2026-01-02T15:04:05',
  '2026-02-30T00:00:00Z',
  '2025-02-29T00:00:00Z',
  '2026-01-02T24:00:00Z',
  '2026-01-02T15:04:60Z',
  '2026-01-02T15:60:05Z',
  '2026-01-02 15:04:05Z',
  '2026-1-2T15:04:05Z',
  '2026-01-02T15:04:05+0100',
  '2026-01-02T15:04:05+25:00',
  '',
  'yesterday',
];

const MICRO_TIMES: unknown[] = [
  '2026-01-02T15:04:05.000000Z',
  '2026-01-02T15:04:05.123456-07:00',
  '2024-02-29T00:00:00.999999+14:00',
  '2026-01-02T15:04:05Z',
  '2026-01-02T15:04:05.123Z',
  '2026-01-02T15:04:05.1234567Z',
  '2026-01-02T15:04:05,123456Z',
  '2026-13-02T15:04:05.000000Z',
  '2026-01-02T15:04:05.000000',
  '',
];

/** What a mutation does and where, before the object. */
interface Mutation {
  mutation: MutationName;
  at: Path;
  change: string;
  required?: boolean;
}

function mutate(base: Json, what: Mutation, edit: (object: Json) => void): MutatedObject {
  const object = structuredClone(base);
  edit(object);
  const { mutation, at, change, required = false } = what;
  return { kind: base.kind as string, mutation, path: fieldPath(at), at, required, change, object };
}

interface Place {
  path: Path;
  changes: Change[];
  required?: boolean;
}

type Weighted = { arbitrary: fc.Arbitrary<MutatedObject>; weight: number };

/** Mutations of one site, each with one of `changes`. */
function setting(base: Json, mutation: MutationName, places: Place[], weight: number): Weighted[] {
  const usable = places.filter((p) => p.changes.length > 0);
  if (usable.length === 0) return [];
  const arbitrary = fc
    .constantFrom(...usable)
    .chain(({ path, changes, required }) =>
      fc
        .constantFrom(...changes)
        .map(({ change, value }) =>
          mutate(base, { mutation, at: path, change, required }, (o) =>
            setAt(o, path, structuredClone(value)),
          ),
        ),
    );
  return [{ arbitrary, weight }];
}

const JSON_VALUE = fc
  .jsonValue({ maxDepth: 2 })
  .map((v) => JSON.parse(JSON.stringify(v)) as unknown);

/** The mutations of one kind's valid base object, weighted; each changes one place. */
export function mutationsOf(base: Json, schemas: BundleSchemas): fc.Arbitrary<MutatedObject> {
  const sites = sitesOf(base, schemas);
  // The identity is not changed; fields may still be added inside metadata.
  const places = sites.filter((s) => s.path.length > 0 && !isIdentity(s));
  const structs = sites.filter((s) => isRecord(s.value) && isStruct(s.node));
  const enums = places.filter((s) => Array.isArray(s.node.enum) && typeof s.value === 'string');
  const pathsOf = (kept: Site[], changes: (s: Site) => Change[]): Place[] =>
    kept.map((s) => ({ path: s.path, changes: changes(s), required: isRequired(s) }));

  const weighted: Weighted[] = [
    ...setting(base, 'type', pathsOf(places, wrongTypes), 5),
    ...setting(
      base,
      'null',
      pathsOf(places, () => [{ change: 'null', value: null }]),
      3,
    ),
    ...setting(
      base,
      'enum',
      pathsOf(enums, (s) =>
        outsideEnum(s.value as string, s.node.enum as unknown[]).map((v) => ({
          change: `${show(s.value)} → ${show(v)}`,
          value: v,
        })),
      ),
      2,
    ),
    ...setting(
      base,
      'empty-enum',
      pathsOf(enums, (s) => [{ change: `${show(s.value)} → ""`, value: '' }]),
      1,
    ),
    ...setting(
      base,
      'int-or-string',
      pathsOf(
        sites.filter((s) => s.node['x-kubernetes-int-or-string'] === true),
        (s) => intOrStringValues(base.kind as string, s),
      ),
      4,
    ),
    ...setting(
      base,
      'quantity',
      pathsOf(
        sites.filter((s) => s.node.format === 'quantity'),
        quantityValues,
      ),
      5,
    ),
    ...byteMutations(base, sites),
    ...timeMutations(base, sites),
  ];

  const renamable = places.filter((s) => s.holder === 'struct' && s.parent);
  if (renamable.length > 0) {
    weighted.push({
      weight: 2,
      arbitrary: fc.constantFrom(...renamable).chain((s) => {
        const name = s.path.at(-1) as string;
        return fc
          .constantFrom(...unknownNames(name, s.parent!))
          .map((to) =>
            mutate(
              base,
              { mutation: 'rename', at: s.path, change: `renamed to ${show(to)}` },
              (o) => renameAt(o, s.path, to),
            ),
          );
      }),
    });
  }

  if (structs.length > 0) {
    weighted.push({
      weight: 3,
      arbitrary: fc
        .tuple(
          fc.constantFrom(...structs),
          fc.oneof(
            fc.stringMatching(/^zz[a-zA-Z0-9]{0,6}$/),
            fc.constantFrom('Name', 'Spec', 'LABELS', 'image_', 'apiversion', 'replica', 'x-y'),
          ),
          JSON_VALUE,
        )
        .filter(([s, name]) => !Object.hasOwn((s.node.properties ?? {}) as Json, name))
        .map(([s, name, value]) =>
          mutate(
            base,
            { mutation: 'add-unknown', at: [...s.path, name], change: `added ${show(value)}` },
            (o) => setAt(o, [...s.path, name], value),
          ),
        ),
    });
  }

  // A copy of a list's item appended: a keyed list (x-kubernetes-list-map-keys) or a set refuses
  // it in server-side apply; an atomic list of scalars takes it, unless Go validation refuses.
  const lists = places.filter(
    (s) =>
      Array.isArray(s.value) &&
      s.value.length > 0 &&
      (s.node['x-kubernetes-list-map-keys'] !== undefined ||
        s.value.every((item) => typeof item !== 'object')),
  );
  if (lists.length > 0) {
    weighted.push({
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom(...lists), fc.nat()).map(([s, pick]) => {
        const items = s.value as unknown[];
        const index = pick % items.length;
        const change = `item ${index} appended again`;
        return mutate(base, { mutation: 'duplicate', at: s.path, change }, (o) =>
          setAt(
            o,
            s.path,
            [...items, items[index]].map((item) => structuredClone(item)),
          ),
        );
      }),
    });
  }

  const withRequired = structs.flatMap((s) =>
    ((s.node.required ?? []) as string[])
      .filter((field) => Object.hasOwn(s.value as Json, field))
      .map((field) => [...s.path, field]),
  );
  if (withRequired.length > 0) {
    weighted.push({
      weight: 2,
      arbitrary: fc
        .constantFrom(...withRequired)
        .map((path) =>
          mutate(
            base,
            { mutation: 'drop-required', at: path, change: 'removed', required: true },
            (o) => deleteAt(o, path),
          ),
        ),
    });
  }
  return fc.oneof(...weighted);
}

/** Secret `data` and ConfigMap `binaryData`: base64 in an entry there, or in a new one. */
function byteMutations(base: Json, sites: Site[]): Weighted[] {
  const entries = sites.filter((s) => s.node.format === 'byte');
  const maps = sites.filter(
    (s) =>
      isRecord(s.value) &&
      (s.node.additionalProperties as SchemaNode | undefined)?.format === 'byte',
  );
  const places = [...entries.map((s) => s.path), ...maps.map((s) => [...s.path, 'token'])];
  return setting(
    base,
    'base64',
    places.map((path) => ({
      path,
      changes: BASE64.map((v) => ({ change: `bytes ${show(v)}`, value: v })),
    })),
    6,
  );
}

/**
 * date-time: `creationTimestamp` of any ObjectMeta (the server parses it before it resets it) and
 * the MicroTime fields the base objects have (a Lease's acquireTime and renewTime).
 */
function timeMutations(base: Json, sites: Site[]): Weighted[] {
  const metas = sites.filter(
    (s) =>
      isRecord(s.value) && Object.hasOwn((s.node.properties ?? {}) as Json, 'creationTimestamp'),
  );
  const micro = sites.filter((s) => s.node.format === 'micro-time');
  const times = sites.filter((s) => s.node.format === 'date-time');
  const changes = (values: unknown[]): Change[] =>
    values.map((v) => ({ change: `time ${show(v)}`, value: v }));
  return setting(
    base,
    'date-time',
    [
      ...metas.map((s) => ({
        path: [...s.path, 'creationTimestamp'],
        changes: changes(DATE_TIMES),
      })),
      ...times.map((s) => ({ path: s.path, changes: changes(DATE_TIMES) })),
      ...micro.map((s) => ({ path: s.path, changes: changes(MICRO_TIMES) })),
    ],
    4,
  );
}
