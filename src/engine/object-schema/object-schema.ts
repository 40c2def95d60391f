// The offline twin of the API server's schema checks of one rendered object under
// fieldValidation=Strict (ADR 0029): a custom resource against its CRD (crd-schemas.ts), a
// built-in kind against the bundle of Kubernetes 1.36. Types, enums, formats, required and unknown
// fields; the Go validation beyond the schema (name syntax, ranges, cross-field rules) is left to
// the dry run.
import type { CrdSchemaCompiler, CustomResourceSchemas } from './crd-schemas.ts';
import type { KubernetesSchemas } from './kubernetes-schemas.ts';
import { objectLabel, objectProblems, type ObjectVerdict } from './object-problems.ts';

/** What `prepare` needs of an object: its kind. */
export interface Kinded {
  apiVersion: string;
  kind: string;
}

/**
 * Where the engine gets the schemas of rendered objects: the offline bundle and CRD files in the
 * CLI (OfflineSchemas), what the API server publishes in the operator. `check` is synchronous:
 * the caller first awaits `prepare` with the objects it will check (gather, then decide).
 */
export interface ObjectSchemas {
  /** Loads what checking objects of these kinds needs (ajv, a group-version's schemas). */
  prepare(objects: readonly Kinded[]): Promise<void>;
  /** The verdict for one rendered object against the schema of its kind. */
  check(object: unknown): ObjectVerdict;
  /**
   * The same schemas plus the CustomResourceDefinitions among `objects` (a Template may render a
   * CRD and resources of its kind together); anything else among them is ignored.
   */
  withCrds(objects: readonly unknown[]): ObjectSchemas;
}

/**
 * Checks one rendered object (plain JSON) against the schema of its kind: a CRD of `crds` (which
 * holds Stencil's own kinds too) first, then the built-in kinds of `builtIns`. A kind with neither
 * is skipped with one note. Problems name the object, the field path, what was expected and the
 * JSON type found, never the value. Without `crds`, no ajv is loaded.
 */
export function validateObject(
  object: unknown,
  builtIns: KubernetesSchemas,
  crds?: CustomResourceSchemas,
): ObjectVerdict {
  if (
    typeof object !== 'object' ||
    object === null ||
    Array.isArray(object) ||
    typeof (object as Record<string, unknown>).apiVersion !== 'string' ||
    typeof (object as Record<string, unknown>).kind !== 'string'
  ) {
    return { checked: false, note: 'an object without apiVersion and kind: no schema, skipped' };
  }
  const typed = object as Record<string, unknown> & { apiVersion: string; kind: string };
  const custom = crds?.schemaOf(typed.apiVersion, typed.kind);
  if (custom && crds) return crds.validate(typed, custom);
  const definition = builtIns.definitionOf(typed.apiVersion, typed.kind);
  if (!definition) {
    return { checked: false, note: `no schema for ${typed.apiVersion} ${typed.kind}, skipped` };
  }
  const errors = builtIns.errorsOf(definition, typed);
  return { checked: true, problems: objectProblems(objectLabel(typed), errors), notes: [] };
}

type CrdModule = typeof import('./crd-schemas.ts');

/**
 * crd-schemas.ts and ajv, with the one compiler of the process (compiled CRD schemas are kept
 * there): loaded by the first `prepare`, of any ObjectSchemas, that meets a custom resource.
 */
let crd: { module: CrdModule; compiler: CrdSchemaCompiler } | undefined;

/** Loads crd-schemas.ts and ajv, once per process. */
export async function loadCrdChecks(): Promise<void> {
  if (crd) return;
  const module = await import('./crd-schemas.ts');
  crd ??= { module, compiler: new module.CrdSchemaCompiler() };
}

/** The custom resource checks, once loadCrdChecks has run. */
export function crdChecks(): { module: CrdModule; compiler: CrdSchemaCompiler } | undefined {
  return crd;
}

/**
 * The schemas known without a cluster: the built-in bundle, Stencil's own kinds, and the CRDs
 * given (`--crds` files, or rendered alongside). ajv is loaded only when `prepare` meets a kind
 * the bundle lacks, or a CRD: a render of built-in kinds never loads it.
 */
export class OfflineSchemas implements ObjectSchemas {
  #crds: CustomResourceSchemas | undefined;

  constructor(
    readonly builtIns: KubernetesSchemas,
    readonly crdObjects: readonly unknown[] = [],
  ) {}

  async prepare(objects: readonly Kinded[]): Promise<void> {
    const custom = objects.some(
      (o) =>
        o.kind === 'CustomResourceDefinition' ||
        this.builtIns.definitionOf(o.apiVersion, o.kind) === undefined,
    );
    if (custom) await loadCrdChecks();
  }

  check(object: unknown): ObjectVerdict {
    if (crd)
      this.#crds ??= new crd.module.CustomResourceSchemas(this.builtIns, crd.compiler).addAll(
        this.crdObjects,
      );
    const verdict = validateObject(object, this.builtIns, this.#crds);
    if (verdict.checked || this.#crds) return verdict;
    return {
      checked: false,
      note: `${verdict.note.replace(/, skipped$/, '')} (not prepared), skipped`,
    };
  }

  withCrds(objects: readonly unknown[]): OfflineSchemas {
    const crds = objects.filter(
      (o) => (o as { kind?: unknown } | null)?.kind === 'CustomResourceDefinition',
    );
    if (crds.length === 0) return this;
    return new OfflineSchemas(this.builtIns, [...this.crdObjects, ...crds]);
  }
}
