// Offline twin of the API server's CRD validation: the openAPIV3Schema checked by validators ajv
// compiled at build time, the CEL rules evaluated from their own text by a real CEL
// implementation, list-map key uniqueness, and metadata.name.
// Messages follow the API server's wording so that `stencil validate` reads like kubectl.
import type { ErrorObject } from 'ajv';
import { CRD_SCHEMAS } from '../../api/schemas.generated.ts';
import * as generated from './crd-validators.generated.ts';
import { pruneNulls } from './null-pruning.ts';
import { unknownFields } from './unknown-fields.ts';
import { Re2CheckTooCostly } from './re2.ts';
import type { Problem } from '../shared/problem.ts';

export type CrdKind = 'Template' | 'TemplateInstance' | 'TemplateRevision' | 'TemplateInstanceSet';

/** Reason given to schema problems (SPEC §1 `SpecInvalid`). */
export const SCHEMA_REASON = 'SpecInvalid';

/** A validating function as ajv compiles it: true when valid, else its errors. */
interface CrdValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/**
 * The validators `npm run generate` compiled from the CRDs (tools/crd-validators.ts): ajv's
 * standalone code, with the CEL rules and list-map keys checked by
 * engine/crd-schema/crd-keywords.ts.
 */
const VALIDATORS: Readonly<Record<CrdKind, CrdValidator>> = {
  Template: generated.Template_v1alpha1,
  TemplateInstance: generated.TemplateInstance_v1alpha1,
  TemplateRevision: generated.TemplateRevision_v1alpha1,
  TemplateInstanceSet: generated.TemplateInstanceSet_v1alpha1,
};

function schemaOf(kind: CrdKind): Parameters<typeof pruneNulls>[1] {
  const schemas = CRD_SCHEMAS as Record<string, unknown>;
  return schemas[`${kind}_v1alpha1`] as Parameters<typeof pruneNulls>[1];
}

/** `/spec/parameters/0/name` → `spec.parameters[0].name`. */
export function toFieldPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, segment) => {
      if (/^\d+$/.test(segment)) return `${path}[${segment}]`;
      return path ? `${path}.${segment}` : segment;
    }, '');
}

/** The JSON type of a value as the API server names it: whole numbers are `integer`. */
export function typeName(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : `"${typeName(value)}"`;
}

type Describe = (error: ErrorObject, params: Record<string, unknown>) => string;

/** Messages per ajv keyword, worded like the API server's. */
const DESCRIBE: Record<string, Describe> = {
  enum: (e, p) =>
    `Unsupported value: ${JSON.stringify(e.data)}: supported values: ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
  type: (e, p) => `Invalid value: "${typeName(e.data)}": must be of type ${String(p.type)}`,
  minLength: (e, p) =>
    `Invalid value: ${describe(e.data)}: should be at least ${String(p.limit)} chars long`,
  maxLength: (_e, p) => `Too long: may not be longer than ${String(p.limit)}`,
  pattern: (e, p) => `Invalid value: ${describe(e.data)}: should match '${String(p.pattern)}'`,
  maxItems: (_e, p) => `Too many: must have at most ${String(p.limit)} items`,
  oneOf: (e, p) =>
    `Invalid value: "object": must validate one and only one schema (oneOf): ${requiredHint(e.schema, 'exactly one of')} (${p.passingSchemas ? 'found more than one' : 'found none'})`,
  not: (e) => `Invalid value: "object": must not validate the schema (not): ${notHint(e.schema)}`,
  'x-kubernetes-validations': (e) => `Invalid value: ${describe(e.data)}: ${e.message ?? ''}`,
};

function toProblem(error: ErrorObject): Problem {
  const path = toFieldPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') {
    return {
      path: path ? `${path}.${String(params.missingProperty)}` : String(params.missingProperty),
      reason: SCHEMA_REASON,
      message: 'Required value',
    };
  }
  if (error.keyword === 'x-kubernetes-list-map-keys') {
    return {
      path: `${path}[${String(params.index)}]`,
      reason: SCHEMA_REASON,
      message: error.message ?? 'Duplicate value',
    };
  }
  const message =
    DESCRIBE[error.keyword]?.(error, params) ??
    `Invalid value: ${describe(error.data)}: ${error.message ?? error.keyword}`;
  return { path, reason: SCHEMA_REASON, message };
}

/** `exactly one of value, valueFrom must be set` from `oneOf: [{required: [value]}, ...]`. */
function requiredHint(branches: unknown, lead: string): string {
  const names = Array.isArray(branches)
    ? branches.flatMap((b: { required?: string[] }) => b.required ?? [])
    : [];
  return `${lead} ${names.join(', ')} must be set`;
}

function notHint(schema: unknown): string {
  const names = (schema as { required?: string[] }).required ?? [];
  return `${names.join(' and ')} cannot all be set together`;
}

/** Errors inside oneOf/anyOf/not branches only explain the combinator's own error. */
export function isBranchError(error: ErrorObject): boolean {
  return /\/(oneOf|anyOf|not)\//.test(error.schemaPath);
}

function metadataProblems(object: Record<string, unknown>): Problem[] {
  const metadata = object.metadata as Record<string, unknown> | undefined;
  const name = metadata?.name;
  if (typeof name === 'string' && name.length > 0) return [];
  return [
    { path: 'metadata.name', reason: SCHEMA_REASON, message: 'Required value: name is required' },
  ];
}

/**
 * Validates `object` against the CRD schema of `kind`, as the API server would on create.
 * Returns every problem found (empty when valid), each with a field path.
 */
export function validateAgainstCrd(kind: CrdKind, object: unknown): Problem[] {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) {
    return [{ path: '', reason: SCHEMA_REASON, message: `a ${kind} must be a YAML/JSON mapping` }];
  }
  const validate = VALIDATORS[kind];
  let valid: boolean;
  try {
    // As the API server does before validating: `defaultValue: null` is no defaultValue at all.
    valid = validate(pruneNulls(object, schemaOf(kind)));
  } catch (error) {
    // A string far longer than the API server takes, against one of the CRDs' patterns (re2.ts).
    if (!(error instanceof Re2CheckTooCostly)) throw error;
    const message = `cannot be checked: ${error.message}`;
    return [
      ...metadataProblems(object as Record<string, unknown>),
      { path: '', reason: SCHEMA_REASON, message },
    ];
  }
  const problems = valid
    ? []
    : (validate.errors ?? []).filter((e) => !isBranchError(e)).map(toProblem);
  return [
    ...metadataProblems(object as Record<string, unknown>),
    ...unknownFieldProblems(object, kind),
    ...withoutTypeFollowUps(problems),
  ];
}

/** As kubectl's strict field validation words them: `unknown field "spec.syncMode"`. */
function unknownFieldProblems(object: object, kind: CrdKind): Problem[] {
  return unknownFields(object, schemaOf(kind)).map((path) => ({
    path,
    reason: SCHEMA_REASON,
    message: `unknown field "${path}"`,
  }));
}

/** A value of the wrong type fails its enum/length checks too; report only the type, as the server does. */
export function withoutTypeFollowUps<P extends Problem>(problems: P[]): P[] {
  const mistyped = new Set(
    problems.filter((p) => p.message.includes('must be of type')).map((p) => p.path),
  );
  return problems.filter((p) => !mistyped.has(p.path) || p.message.includes('must be of type'));
}
