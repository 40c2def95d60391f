// The built-in kinds' schemas, loaded on first use from the committed bundle (schemas/kubernetes,
// `npm run generate`) through an injected reader, so the engine does no I/O. Nothing is read until
// an object of a kind needs it, and then only the files of that kind's package and the packages
// it reaches (ADR 0029). No ajv here: the bundle is walked, not compiled (subset-validator.ts).
import type { ErrorObject } from 'ajv';
import { BUILT_IN_FORMATS } from './kubernetes-formats.ts';
import { builtInSchema, type SchemaNode } from './schema-dialect.ts';
import { subsetErrors } from './subset-validator.ts';

/**
 * Reads one file of the bundle by name (`index.json`, `io.k8s.api.apps.v1.json`) and returns its
 * text; throws when it cannot. The process supplies it (src/kubernetes-schema-files.ts).
 */
export type SchemaFileReader = (file: string) => string;

/** index.json of the bundle (tools/k8s-schemas.ts writes it). */
interface BundleIndex {
  kubernetes: string;
  groupVersions: Record<string, { stability: string; kinds: Record<string, string> }>;
  /** Package → the packages its definitions reach. */
  files: Record<string, string[]>;
}

/** The definition of metadata, also checked for custom resources as the server decodes it. */
export const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

function packageOf(definition: string): string {
  return definition.slice(0, definition.lastIndexOf('.'));
}

/**
 * The built-in kinds' schemas of one Kubernetes version. One per process is enough: what it
 * loads stays loaded (well under a MiB of schemas, measured by `npm run bench:render`).
 */
export class KubernetesSchemas {
  readonly #read: SchemaFileReader;
  #index: BundleIndex | undefined;
  readonly #files = new Map<string, number>();
  readonly #definitions = new Map<string, SchemaNode>();

  constructor(read: SchemaFileReader) {
    this.#read = read;
  }

  /** The Kubernetes version of the bundle (`v1.36.3`). Reads the index. */
  get kubernetesVersion(): string {
    return this.#bundleIndex().kubernetes;
  }

  /** The bundle files read so far and their size in characters. */
  get loaded(): { files: number; characters: number } {
    const characters = [...this.#files.values()].reduce((a, b) => a + b, 0);
    return { files: this.#files.size, characters };
  }

  /** The definition a built-in `apiVersion`/`kind` is checked against; undefined when none. */
  definitionOf(apiVersion: string, kind: string): string | undefined {
    const versions = this.#bundleIndex().groupVersions;
    const kinds = Object.hasOwn(versions, apiVersion) ? versions[apiVersion]?.kinds : undefined;
    return kinds && Object.hasOwn(kinds, kind) ? kinds[kind] : undefined;
  }

  /** `alpha`, `beta` or `ga` for a group-version of the bundle. */
  stabilityOf(apiVersion: string): string | undefined {
    const versions = this.#bundleIndex().groupVersions;
    return Object.hasOwn(versions, apiVersion) ? versions[apiVersion]?.stability : undefined;
  }

  /**
   * The errors of `data` against a built-in definition (empty when valid), in ajv's shape; the
   * bundle files the definition needs are read first, once.
   */
  errorsOf(definition: string, data: unknown): ErrorObject[] {
    let schema = this.#definitions.get(definition);
    if (!schema) {
      const pkg = packageOf(definition);
      for (const file of [pkg, ...(this.#bundleIndex().files[pkg] ?? [])]) this.#load(file);
      schema = this.#definitions.get(definition);
      if (!schema) throw new Error(`the schema bundle has no ${definition}`);
    }
    return subsetErrors(schema, data, this.#definitions, BUILT_IN_FORMATS);
  }

  #bundleIndex(): BundleIndex {
    this.#index ??= JSON.parse(this.#readFile('index.json')) as BundleIndex;
    return this.#index;
  }

  #readFile(file: string): string {
    const text = this.#read(file);
    this.#files.set(file, text.length);
    return text;
  }

  #load(pkg: string): void {
    const file = `${pkg}.json`;
    if (this.#files.has(file)) return;
    const definitions = JSON.parse(this.#readFile(file)) as Record<string, SchemaNode>;
    for (const [name, definition] of Object.entries(definitions)) {
      this.#definitions.set(name, builtInSchema(definition));
    }
  }
}
