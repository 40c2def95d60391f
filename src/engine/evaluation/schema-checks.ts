// Schema checks of a render's objects, named the way a Template author can act on (issue #26):
// the object, the field, what the schema expects, and where known the `{{ }}` that produced the
// value (Template line and column) and the parameter it read. Two checks:
// - the values: each object against the schema of its kind (ObjectSchemas);
// - the placements: a parameter placed as the whole value of a field (`replicas:
//   {{parameters.n}}`) must have a declared type the field accepts, whatever its value or default.
// Pure; the schemas are given.
import type { KubeObject } from '../../api/object-meta.ts';
import type { ParameterType } from '../../api/template.ts';
import { toFieldPath } from '../crd-schema/schema-validation.ts';
import type { ValueOrigin } from '../render/render.ts';
import type { Problem } from '../shared/problem.ts';
import { objectLabel, type ObjectProblem } from '../object-schema/object-problems.ts';
import type { ObjectSchemas } from '../object-schema/object-schema.ts';

/** A rendered object and where its values came from (RenderedDocument's fields). */
export interface RenderedObject {
  object: KubeObject;
  origins: readonly ValueOrigin[];
}

export interface SchemaFindings {
  problems: Problem[];
  /** `object label` + NUL + field path of each problem (to say a field's problem once). */
  fields: Set<string>;
  /** One line per kind that was not checked, and why (no schema, CEL rules left out). */
  notes: string[];
}

/** `(from parameter x at template line 7, column 13)`, or `(template line 7, column 13)`. */
function originText(origin: ValueOrigin | undefined): string {
  if (!origin) return '';
  const from = origin.parameter !== undefined ? `parameter ${origin.parameter} at ` : '';
  return ` (from ${from}template ${origin.at})`;
}

function originsByField(origins: readonly ValueOrigin[]): Map<string, ValueOrigin> {
  return new Map(origins.map((o) => [toFieldPath(o.pointer), o]));
}

function fieldKey(p: ObjectProblem): string {
  return `${p.object}\u0000${p.path}`;
}

function asProblem(p: ObjectProblem, origin: ValueOrigin | undefined, reason: string): Problem {
  return { path: '', reason, message: `${p.object}: ${p.path}: ${p.message}${originText(origin)}` };
}

/**
 * The problems of each object against the schema of its kind, with the origin of the value where
 * a `{{ }}` produced it. Left out: problems at fields produced from `ignored` parameters (the
 * placeholders of a Template check without literal defaults) and at the fields of `known` (said
 * already). Kinds without a schema give notes.
 */
export function objectSchemaProblems(
  rendered: readonly RenderedObject[],
  schemas: ObjectSchemas,
  reason: string,
  skip: { ignored?: ReadonlySet<string>; known?: ReadonlySet<string> } = {},
): SchemaFindings {
  const scoped = schemas.withCrds(rendered.map((r) => r.object));
  const findings: SchemaFindings = { problems: [], fields: new Set(), notes: [] };
  for (const { object, origins } of rendered) {
    const verdict = scoped.check(object);
    if (!verdict.checked) {
      findings.notes.push(verdict.note);
      continue;
    }
    findings.notes.push(...verdict.notes);
    const byField = originsByField(origins);
    for (const problem of verdict.problems) {
      const origin = byField.get(problem.path);
      if (origin?.parameter !== undefined && skip.ignored?.has(origin.parameter)) continue;
      if (skip.known?.has(fieldKey(problem))) continue;
      findings.problems.push(asProblem(problem, origin, reason));
      findings.fields.add(fieldKey(problem));
    }
  }
  return { ...findings, notes: [...new Set(findings.notes)] };
}

/** A value of each scalar type, standing for any value of a parameter of that type. */
const WITNESS: Readonly<Partial<Record<ParameterType, string | number | boolean>>> = {
  string: '',
  number: 0,
  bool: true,
};

/** What to do instead, by the declared type of a misplaced parameter. */
const ADVICE: Readonly<Partial<Record<ParameterType, string>>> = {
  string: 'declare the parameter with the type the field takes, or convert it with a helper',
  number: 'declare the parameter as a string, or quote it: {{quote parameters.NAME}}',
  bool: 'declare the parameter as a string, or quote it: {{quote parameters.NAME}}',
};

function setAt(object: unknown, pointer: string, value: unknown): void {
  const segments = pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const last = segments.pop();
  let node = object as Record<string, unknown>;
  for (const segment of segments) node = node[segment] as Record<string, unknown>;
  if (last !== undefined) node[last] = value;
}

/**
 * Each parameter placed as the whole value of a field whose schema type its declared type does
 * not fit: a string parameter in an integer field, a number in a string field. Checked with a
 * witness of the declared type in the field, so the verdict does not depend on the value the
 * render had. Parameters without a scalar type (untyped, array, object) are not checked.
 */
export function placementProblems(
  rendered: readonly RenderedObject[],
  schemas: ObjectSchemas,
  declared: ReadonlyMap<string, ParameterType | undefined>,
  reason: string,
): Omit<SchemaFindings, 'notes'> {
  const scoped = schemas.withCrds(rendered.map((r) => r.object));
  const problems: Problem[] = [];
  const fields = new Set<string>();
  for (const { object, origins } of rendered) {
    const placed = origins.filter((o) => {
      const type = o.parameter !== undefined ? declared.get(o.parameter) : undefined;
      return o.placed && type !== undefined && WITNESS[type] !== undefined;
    });
    if (placed.length === 0) continue;
    const witness = structuredClone(object);
    for (const o of placed) setAt(witness, o.pointer, WITNESS[declared.get(o.parameter!)!]);
    const verdict = scoped.check(witness);
    if (!verdict.checked) continue;
    const label = objectLabel(object);
    const byField = originsByField(placed);
    for (const p of verdict.problems) {
      const origin = byField.get(p.path);
      if (p.keyword !== 'type' || !origin) continue;
      const problem = { ...p, object: label };
      const type = declared.get(origin.parameter!)!;
      const advice = ADVICE[type]!.replace('NAME', origin.parameter!);
      problems.push({
        path: '',
        reason,
        message: `${problem.object}: ${p.path}: the ${type} parameter ${origin.parameter!} is placed where the schema expects ${p.expected} (template ${origin.at}); ${advice}`,
      });
      fields.add(fieldKey(problem));
    }
  }
  return { problems, fields };
}
