// Checks on the annotations of rendered objects that every render runs, and the Template dry run
// (`stencil validate`) runs too (issue #22, ADR 0017): each annotation is a string (a YAML `true`
// or `3` left unquoted is not), and `stencil.dev/wave` is a whole number. Pure.
import type { KubeObject } from '../api/object-meta.ts';
import { describeObject, waveProblem } from './inventory.ts';

/** What a non-string annotation value is called in the message (never the value itself). */
function kindOfValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  return `a ${typeof value}`;
}

/**
 * The first annotation of `object` whose value is not a string, as a message naming the object
 * and the annotation, or nothing. Kubernetes annotations are strings; Stencil reads several
 * (`restart-on-change`, `restart-on-change-objects`, `wave`, `ready-when`) as text, and the
 * API server would refuse the others anyway.
 */
export function nonStringAnnotationProblem(object: KubeObject): string | undefined {
  const annotations: unknown = object.metadata.annotations;
  if (annotations === undefined || annotations === null) return undefined;
  if (typeof annotations !== 'object' || Array.isArray(annotations))
    return `${describeObject(object)}: metadata.annotations must be a map of strings, got ${kindOfValue(annotations)}`;
  for (const [key, value] of Object.entries(annotations as Record<string, unknown>)) {
    if (typeof value !== 'string')
      return `${describeObject(object)}: annotation ${key} must be a string; quote it (got ${kindOfValue(value)})`;
  }
  return undefined;
}

/**
 * Why a rendered object's annotations are unusable (a non-string value, a
 * `stencil.dev/wave` that is not a whole number), or nothing.
 */
export function renderedObjectProblem(object: KubeObject): string | undefined {
  return nonStringAnnotationProblem(object) ?? waveProblem(object);
}
