// The schemas an API server publishes (`/openapi/v3`, one document per group-version), as the
// operator checks rendered objects against them (ADR 0030): the built-in kinds (and those of
// aggregated APIs) converted to the bundle's dialect exactly as `npm run generate` converts them
// (openapi-definitions.ts), custom resources checked with ajv as the CLI checks them against a
// CRD file (crd-schemas.ts). What the cluster does not publish is checked offline (the bundle).
import type { ErrorObject } from 'ajv';
import type { CustomResourceSchemas } from './crd-schemas.ts';
import { BUILT_IN_FORMATS } from './kubernetes-formats.ts';
import { objectLabel, objectProblems, type ObjectVerdict } from './object-problems.ts';
import {
  crdChecks,
  loadCrdChecks,
  type Kinded,
  type ObjectSchemas,
  type OfflineSchemas,
} from './object-schema.ts';
import {
  compactDefinition,
  kindsOfDefinition,
  type GroupVersionKind,
  type Refuse,
} from './openapi-definitions.ts';
import { builtInSchema, type SchemaNode } from './schema-dialect.ts';
import { subsetErrors } from './subset-validator.ts';

/** How the objects of one kind of a published document are checked. */
export type PublishedKind =
  /** A built-in (or aggregated) kind: its definition, walked in the bundle's dialect. */
  | { definition: string }
  /** A kind a CRD serves: its schema as published, checked with ajv as a CRD's. */
  | { crd: SchemaNode };

/** One group-version document of `/openapi/v3`, converted. */
export interface PublishedGroupVersion {
  apiVersion: string;
  kinds: ReadonlyMap<string, PublishedKind>;
  /** The document's Go definitions in the bundle's dialect, by name, refs resolved. */
  definitions: ReadonlyMap<string, SchemaNode>;
  /** What the conversion left out (keywords the dialect does not know), one line each. */
  notes: string[];
}

/** An OpenAPI v3 document as `/openapi/v3/<group-version>` serves it (what is read of it). */
export interface OpenApiDocument {
  components?: { schemas?: Record<string, unknown> };
}

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * apiextensions-apiserver names the definition of a CRD's kind after its group, reversed, its
 * version and its kind (`widgets.example.com` v1 → `com.example.v1.Widget`); Go types are named
 * after their package (`io.k8s.api.apps.v1.Deployment`), so no built-in or aggregated kind's
 * definition has that name.
 */
export function crdDefinitionName({ group, version, kind }: GroupVersionKind): string {
  const reversed = group.includes('.') ? group.split('.').reverse().join('.') : group;
  return `${reversed}.${version}.${kind}`;
}

function isCrdDefinition(name: string, schema: SchemaNode): boolean {
  const gvks = schema['x-kubernetes-group-version-kind'];
  return (
    Array.isArray(gvks) && (gvks as GroupVersionKind[]).some((g) => crdDefinitionName(g) === name)
  );
}

const ENUM = new Set(['enum']);

/** Keywords of a published schema that say nothing about validity (documentation, defaults). */
const DOCUMENTATION = new Set([
  'description',
  'default',
  'example',
  'externalDocs',
  'title',
  'x-kubernetes-group-version-kind',
]);

/** Where a schema node holds schema nodes: one, or a list. */
const ONE_CHILD = new Set(['items', 'additionalProperties', 'not']);
const CHILDREN = new Set(['items', 'allOf', 'anyOf', 'oneOf']);

/** `node` without the keywords of `dropped`, at every depth (properties so named are kept). */
function without(node: SchemaNode, dropped: ReadonlySet<string>): SchemaNode {
  const inner = (child: unknown): unknown => (isNode(child) ? without(child, dropped) : child);
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(node)) {
    if (dropped.has(key)) continue;
    if (key === 'properties' && isNode(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inner(v)]));
    } else if (ONE_CHILD.has(key) && isNode(value)) out[key] = inner(value);
    else if (CHILDREN.has(key) && Array.isArray(value)) out[key] = value.map(inner);
    else out[key] = value;
  }
  return out;
}

/**
 * A CRD kind's published schema as the CRD dialect (crdSchema) reads an openAPIV3Schema: the
 * server publishes the CRD's schema with documentation added and `metadata` replaced by a $ref
 * to ObjectMeta, which validateCustomResource checks on its own.
 */
export function publishedCrdSchema(schema: SchemaNode): SchemaNode {
  const out = without(schema, DOCUMENTATION);
  const properties = isNode(out.properties) ? out.properties : {};
  return { ...out, properties: { ...properties, metadata: { type: 'object' } } };
}

/**
 * A built-in definition in the bundle's dialect, as the bundle would hold it. Enums of
 * `...Status` definitions are left out, as the bundle leaves them out (ADR 0029): the API server
 * resets status on create and its validation checks no enum there.
 */
function publishedDefinition(name: string, schema: SchemaNode, refuse: Refuse): SchemaNode {
  const served = name.endsWith('Status') ? without(schema, ENUM) : schema;
  return compactDefinition(name, served, refuse);
}

/** Refs to definitions the document lacks become `{}` (anything), each said once. */
function resolveRefs(
  node: SchemaNode,
  known: ReadonlyMap<string, unknown>,
  missing: Set<string>,
): SchemaNode {
  if (typeof node.$ref === 'string' && !known.has(node.$ref)) {
    missing.add(node.$ref);
    return {};
  }
  const out: SchemaNode = { ...node };
  if (isNode(node.properties)) {
    out.properties = Object.fromEntries(
      Object.entries(node.properties).map(([name, child]) => [
        name,
        isNode(child) ? resolveRefs(child, known, missing) : child,
      ]),
    );
  }
  for (const key of ['items', 'additionalProperties'] as const) {
    const child = node[key];
    if (isNode(child)) out[key] = resolveRefs(child, known, missing);
  }
  return out;
}

/**
 * Converts one group-version document of `/openapi/v3` (e.g. `apis/apps/v1`) for the checks of
 * objects of `apiVersion`. Never throws on what the dialect does not know: it is left out (which
 * accepts more, never less) and named in `notes`.
 */
export function convertPublishedDocument(
  apiVersion: string,
  document: OpenApiDocument,
): PublishedGroupVersion {
  const schemas = isNode(document.components?.schemas) ? document.components.schemas : {};
  const kinds = new Map<string, PublishedKind>();
  const compacted = new Map<string, SchemaNode>();
  const refused = new Map<string, string[]>();
  const refuse = (where: string, what: string): void => {
    const key = what.replace(/: decide whether validation needs it$/, '');
    const places = refused.get(key) ?? [];
    places.push(where);
    refused.set(key, places);
  };
  for (const [name, schema] of Object.entries(schemas)) {
    if (!isNode(schema)) continue;
    const own = kindsOfDefinition(name, schema).filter((k) => k.apiVersion === apiVersion);
    if (isCrdDefinition(name, schema)) {
      const crd = publishedCrdSchema(schema);
      for (const { kind } of own) kinds.set(kind, { crd });
      continue;
    }
    compacted.set(name, publishedDefinition(name, schema, refuse));
    for (const { kind } of own) kinds.set(kind, { definition: name });
  }
  const missing = new Set<string>();
  const definitions = new Map<string, SchemaNode>();
  for (const [name, node] of compacted) {
    definitions.set(name, builtInSchema(resolveRefs(node, compacted, missing)));
  }
  const notes = [...refused].map(
    ([what, at]) => `${what}, left out (${at.length} place(s), first ${at[0]})`,
  );
  for (const ref of missing) notes.push(`no definition ${ref}: any value accepted there`);
  return { apiVersion, kinds, definitions, notes };
}

/** The path of a group-version's document under `/openapi/v3/`: `api/v1`, `apis/apps/v1`. */
export function documentPath(apiVersion: string): string {
  return apiVersion.includes('/') ? `apis/${apiVersion}` : `api/${apiVersion}`;
}

/**
 * The documents of `apiVersions`, fetched unless held at their current hash, and every other
 * document held: by apiVersion, undefined when not served (or not readable). Never fails.
 */
export type PublishedDocuments = (
  apiVersions: readonly string[],
) => Promise<ReadonlyMap<string, PublishedGroupVersion | undefined>>;

/** What a PublishedSchemas and the copies withCrds makes of it share. */
interface Held {
  published: ReadonlyMap<string, PublishedGroupVersion | undefined>;
}

/**
 * The schemas an API server publishes, as ObjectSchemas: `prepare` has the documents of the
 * objects' group-versions fetched (through `documents`, src/kube/cluster-schemas.ts; the engine
 * does no I/O), `check` reads those held. Stencil's own kinds and the CRDs rendered alongside
 * come first, as offline; a kind the cluster does not publish is checked offline (the bundle).
 */
export class PublishedSchemas implements ObjectSchemas {
  readonly #held: Held;
  #crds: CustomResourceSchemas | undefined;

  constructor(
    readonly documents: PublishedDocuments,
    readonly offline: OfflineSchemas,
    readonly crdObjects: readonly unknown[] = [],
    held?: Held,
  ) {
    this.#held = held ?? { published: new Map() };
  }

  async prepare(objects: readonly Kinded[]): Promise<void> {
    const published = await this.documents([...new Set(objects.map((o) => o.apiVersion))]);
    this.#held.published = published;
    await this.offline.prepare(objects);
    const custom = objects.some((o) => {
      if (o.kind === 'CustomResourceDefinition') return true;
      const entry = published.get(o.apiVersion)?.kinds.get(o.kind);
      return entry ? 'crd' in entry : !this.offline.builtIns.definitionOf(o.apiVersion, o.kind);
    });
    if (custom) await loadCrdChecks();
  }

  check(object: unknown): ObjectVerdict {
    if (
      !isNode(object) ||
      typeof object.apiVersion !== 'string' ||
      typeof object.kind !== 'string'
    ) {
      return this.offline.check(object);
    }
    const typed = object as SchemaNode & { apiVersion: string; kind: string };
    const { apiVersion, kind } = typed;
    const crds = this.#customResources();
    const custom = crds?.schemaOf(apiVersion, kind);
    if (crds && custom) return crds.validate(typed, custom);
    const document = this.#held.published.get(apiVersion);
    const entry = document?.kinds.get(kind);
    if (!document || !entry) return this.offline.check(object);
    try {
      return checkPublished(typed, document, entry, this.offline);
    } catch (error) {
      // A document this conversion reads wrongly must not stop a reconcile: the dry run decides.
      const why = error instanceof Error ? error.message : String(error);
      return {
        checked: false,
        note: `the published schema of ${apiVersion} ${kind} cannot be checked (${why}), skipped`,
      };
    }
  }

  withCrds(objects: readonly unknown[]): PublishedSchemas {
    const crds = objects.filter((o) => isNode(o) && o.kind === 'CustomResourceDefinition');
    if (crds.length === 0) return this;
    return new PublishedSchemas(
      this.documents,
      this.offline,
      [...this.crdObjects, ...crds],
      this.#held,
    );
  }

  /** Stencil's own kinds and the CRDs rendered alongside, once ajv is loaded. */
  #customResources(): CustomResourceSchemas | undefined {
    const crd = crdChecks();
    if (crd) {
      this.#crds ??= new crd.module.CustomResourceSchemas(
        this.offline.builtIns,
        crd.compiler,
      ).addAll(this.crdObjects);
    }
    return this.#crds;
  }
}

function checkPublished(
  object: SchemaNode & { apiVersion: string; kind: string },
  document: PublishedGroupVersion,
  entry: PublishedKind,
  offline: OfflineSchemas,
): ObjectVerdict {
  const { definitions } = document;
  if ('crd' in entry) {
    const crd = crdChecks();
    if (!crd) {
      const note = `no schema for ${object.apiVersion} ${object.kind} (not prepared), skipped`;
      return { checked: false, note };
    }
    // The custom resource's metadata, as the document's own ObjectMeta says.
    const meta = {
      errorsOf: (definition: string, data: unknown): ErrorObject[] => {
        const schema = definitions.get(definition);
        return schema
          ? subsetErrors(schema, data, definitions, BUILT_IN_FORMATS)
          : offline.builtIns.errorsOf(definition, data);
      },
    };
    return crd.module.validateCustomResource(object, entry.crd, meta, crd.compiler);
  }
  const schema = definitions.get(entry.definition);
  if (!schema) throw new Error(`no definition ${entry.definition}`);
  const errors = subsetErrors(schema, object, definitions, BUILT_IN_FORMATS);
  return { checked: true, problems: objectProblems(objectLabel(object), errors), notes: [] };
}
