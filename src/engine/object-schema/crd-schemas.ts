// Custom resources checked against the openAPIV3Schema of their CRD, given at run time (a CRD the
// Template renders, or --crds), as the API server checks them under fieldValidation=Strict. The
// schemas are compiled by ajv with the repository's Kubernetes keywords (crd-schema/crd-ajv.ts):
// unlike the built-in bundle, a CRD schema may use all of JSON Schema and CEL. Its `pattern`s are
// RE2 matched in linear time (crd-schema/re2.ts), so a hostile CRD cannot stall the operator.
import type { Ajv, ValidateFunction } from 'ajv';
import { CRD_SCHEMAS } from '../../api/schemas.generated.ts';
import { API_VERSION } from '../../api/well-known.ts';
import { createKubernetesAjv } from '../crd-schema/crd-ajv.ts';
import { pruneNulls } from '../crd-schema/null-pruning.ts';
import { applyDefaults } from '../crd-schema/structural-defaults.ts';
import { Re2CheckTooCostly } from '../crd-schema/re2.ts';
import { isInt32, isInt64 } from './kubernetes-formats.ts';
import { OBJECT_META, type KubernetesSchemas } from './kubernetes-schemas.ts';
import { objectLabel, objectProblems, underField, type ObjectVerdict } from './object-problems.ts';
import { crdSchema, type SchemaNode } from './schema-dialect.ts';

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A compiled CRD schema and the CEL rules it could not check. */
interface CrdCheck {
  check: ValidateFunction;
  skippedRules: string[];
  schema: SchemaNode;
}

/** Compiled CRD schemas kept, by their JSON: a Template renders the same CRD at every pass. */
const CACHE_SIZE = 64;

/**
 * Errors after which the API server does not run a custom resource's CEL rules (hasBlockingErr in
 * apiextensions-apiserver: wrong type, required, enum, too long, too many); it says so instead.
 */
const BLOCKING = new Set(['type', 'required', 'enum', 'maxLength', 'maxItems', 'maxProperties']);
const CEL_BLOCKED =
  'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

/**
 * Compiles CRD schemas with ajv, once per schema: one per process, shared by every
 * CustomResourceSchemas. ajv is created on the first compilation.
 */
export class CrdSchemaCompiler {
  #ajv: Ajv | undefined;
  readonly #compiled = new Map<string, CrdCheck>();

  /** Throws when ajv cannot compile the schema (a pattern that is not RE2, say). */
  compile(openAPIV3Schema: SchemaNode): CrdCheck {
    const key = JSON.stringify(openAPIV3Schema);
    const cached = this.#compiled.get(key);
    if (cached) return cached;
    const { schema, formats, skippedRules } = crdSchema(openAPIV3Schema);
    const ajv = this.#instance();
    // Formats the API server checks and this does not pass (ADR 0029).
    for (const format of formats) if (!ajv.formats[format]) ajv.addFormat(format, true);
    const compiled = { check: ajv.compile(schema), skippedRules, schema };
    const [oldest] = this.#compiled;
    if (oldest && this.#compiled.size >= CACHE_SIZE) {
      this.#compiled.delete(oldest[0]);
      ajv.removeSchema(oldest[1].schema);
    }
    this.#compiled.set(key, compiled);
    return compiled;
  }

  #instance(): Ajv {
    if (!this.#ajv) {
      // Schemas written by others: union types and types implied by other keywords are fine.
      const ajv = createKubernetesAjv({ allowUnionTypes: true, strictTypes: false });
      // kube-openapi checks the range of int32, int64 and float numbers.
      ajv.addFormat('int32', { type: 'number', validate: isInt32 });
      ajv.addFormat('int64', { type: 'number', validate: isInt64 });
      ajv.addFormat('float', {
        type: 'number',
        validate: (n: number) => Math.abs(n) <= 3.4028234663852886e38,
      });
      ajv.addFormat('double', true);
      this.#ajv = ajv;
    }
    return this.#ajv;
  }
}

/**
 * The CRD schemas one validation may use: Stencil's own kinds (config/crd), then the CRDs a
 * Template renders and those of --crds. Each served version with a schema is kept under
 * `apiVersion kind`; a later CRD of the same group and kind replaces an earlier one.
 */
export class CustomResourceSchemas {
  readonly #schemas = new Map<string, SchemaNode>();

  constructor(
    readonly builtIns: KubernetesSchemas,
    readonly compiler: CrdSchemaCompiler,
  ) {
    for (const [name, schema] of Object.entries(CRD_SCHEMAS)) {
      const [kind, version] = name.split('_');
      if (version === API_VERSION.split('/')[1]) {
        this.#schemas.set(`${API_VERSION} ${kind}`, schema);
      }
    }
  }

  /** Adds the CRDs among `objects` (anything else is ignored); returns `this`. */
  addAll(objects: Iterable<unknown>): this {
    for (const object of objects) this.add(object);
    return this;
  }

  /** Adds a CustomResourceDefinition (apiextensions.k8s.io/v1); ignores anything else. */
  add(object: unknown): void {
    if (!isRecord(object) || object.kind !== 'CustomResourceDefinition') return;
    if (object.apiVersion !== 'apiextensions.k8s.io/v1' || !isRecord(object.spec)) return;
    const { group, names, versions } = object.spec;
    if (typeof group !== 'string' || !isRecord(names) || typeof names.kind !== 'string') return;
    for (const version of Array.isArray(versions) ? versions : []) {
      if (!isRecord(version) || typeof version.name !== 'string' || version.served === false) {
        continue;
      }
      const schema = isRecord(version.schema) ? version.schema.openAPIV3Schema : undefined;
      if (isRecord(schema)) this.#schemas.set(`${group}/${version.name} ${names.kind}`, schema);
    }
  }

  /** The openAPIV3Schema of `apiVersion`/`kind`, if a CRD here serves it. */
  schemaOf(apiVersion: string, kind: string): SchemaNode | undefined {
    return this.#schemas.get(`${apiVersion} ${kind}`);
  }

  /** Checks a custom resource against the schema this holds for its kind (validateCustomResource). */
  validate(object: Json, openAPIV3Schema: SchemaNode): ObjectVerdict {
    return validateCustomResource(object, openAPIV3Schema, this.builtIns, this.compiler);
  }
}

/**
 * Checks a custom resource against a CRD version's openAPIV3Schema given at run time, as the API
 * server does under fieldValidation=Strict: nulls the server prunes are pruned, unknown fields
 * (outside x-kubernetes-preserve-unknown-fields) are problems, metadata is checked as the
 * built-in ObjectMeta, and the CEL rules do not run after a blocking error. A schema ajv cannot
 * compile, or a value too long to check against its pattern in bounded time, makes the object
 * skipped, with the reason. `builtIns` holds ObjectMeta (the bundle, or the documents an API
 * server publishes).
 */
export function validateCustomResource(
  object: Json,
  openAPIV3Schema: SchemaNode,
  builtIns: Pick<KubernetesSchemas, 'errorsOf'>,
  compiler: CrdSchemaCompiler,
): ObjectVerdict {
  const kind = `${String(object.apiVersion)} ${String(object.kind)}`;
  let compiled;
  try {
    compiled = compiler.compile(openAPIV3Schema);
  } catch (error) {
    const why = (error as Error).message;
    return {
      checked: false,
      note: `the schema of ${kind} cannot be checked offline (${why}), skipped`,
    };
  }
  const label = objectLabel(object);
  // The API server's order: defaults first (a null with a default takes it), then the nulls
  // left are pruned, then the object is validated.
  const data = pruneNulls(applyDefaults(object, openAPIV3Schema), openAPIV3Schema) as Json;
  let errors;
  try {
    errors = compiled.check(data) ? [] : (compiled.check.errors ?? []);
  } catch (error) {
    if (!(error instanceof Re2CheckTooCostly)) throw error;
    return {
      checked: false,
      note: `${label} cannot be checked offline (${error.message}), skipped`,
    };
  }
  const blocked = errors.some((e) => BLOCKING.has(e.keyword));
  const problems = objectProblems(
    label,
    blocked ? errors.filter((e) => e.keyword !== 'x-kubernetes-validations') : errors,
  );
  if (isRecord(data.metadata)) {
    const metaErrors = builtIns.errorsOf(OBJECT_META, data.metadata);
    problems.push(...underField('metadata', objectProblems(label, metaErrors)));
  }
  const notes = compiled.skippedRules.map(
    (rule) =>
      `${kind}: the CEL rule ${JSON.stringify(rule)} uses what offline CEL lacks, not checked`,
  );
  if (blocked) notes.push(`${kind}: ${CEL_BLOCKED}`);
  return { checked: true, problems, notes };
}
