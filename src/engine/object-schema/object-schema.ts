// The offline twin of the API server's schema checks of one rendered object under
// fieldValidation=Strict (ADR 0029): a custom resource against its CRD (crd-schemas.ts), a
// built-in kind against the bundle of Kubernetes 1.36. Types, enums, formats, required and unknown
// fields; the Go validation beyond the schema (name syntax, ranges, cross-field rules) is left to
// the dry run.
import type { CustomResourceSchemas } from './crd-schemas.ts';
import type { KubernetesSchemas } from './kubernetes-schemas.ts';
import { objectLabel, objectProblems, type ObjectVerdict } from './object-problems.ts';

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
