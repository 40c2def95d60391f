// Checks on the annotations of rendered objects that every render runs, and the Template dry run
// (`stencil validate`) runs too (issue #22, ADR 0017): each annotation is a string (a YAML `true`
// or `3` left unquoted is not), `stencil.dev/wave` is a whole number, and no number is NaN or
// infinite. Pure.
import type { KubeObject } from '../../api/object-meta.ts';
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
 * The first number of `object` that is NaN or infinite, as a message naming the object and the
 * field path, or nothing. JSON has no such numbers: the applied object would carry `null`
 * instead (a `number` parameter reads "NaN" and "Inf" as Go does). Iterative, depth-first in
 * document order.
 */
export function nonFiniteNumberProblem(object: KubeObject): string | undefined {
  const stack: [unknown, string][] = [[object, '']];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'number' && !Number.isFinite(value))
      return `${describeObject(object)}: ${path} is ${String(value)}, which JSON cannot hold: give a finite number`;
    if (typeof value !== 'object' || value === null) continue;
    const children: [unknown, string][] = Array.isArray(value)
      ? value.map((v, i) => [v, `${path}[${i}]`])
      : Object.entries(value).map(([k, v]) => [v, path === '' ? k : `${path}.${k}`]);
    for (const child of children.reverse()) stack.push(child);
  }
  return undefined;
}

/**
 * Why a rendered object's annotations are unusable (a non-string value, a
 * `stencil.dev/wave` that is not a whole number) or a number is not finite, or nothing.
 */
export function renderedObjectProblem(object: KubeObject): string | undefined {
  return (
    nonStringAnnotationProblem(object) ?? waveProblem(object) ?? nonFiniteNumberProblem(object)
  );
}
