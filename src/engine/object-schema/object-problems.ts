// ajv's errors for a rendered object, as problems a Template author can act on: the object, the
// field path, what the schema expects there and the JSON type found. Never the value itself: a
// rendered value may come from a Secret.
import type { ErrorObject } from 'ajv';
import { TemplateReason } from '../../api/condition.ts';
import {
  isBranchError,
  toFieldPath,
  typeName,
  withoutTypeFollowUps,
} from '../crd-schema/schema-validation.ts';
import type { Problem } from '../shared/problem.ts';
import { FORMAT_EXPECTATIONS } from './kubernetes-formats.ts';

/** A rendered object that does not fit its schema, at one field. */
export interface ObjectProblem extends Problem {
  /** The object: `Kind namespace/name`, or `Kind name` without a namespace. */
  object: string;
  /** What the schema asks for at `path`: `integer`, `one of "A", "B"`, `a declared field`, ... */
  expected: string;
  /**
   * The JSON type of what is there (`string`, `integer`, `number`, `boolean`, `object`, `array`,
   * `null`), or `absent`.
   */
  actual: string;
  /** The schema keyword that failed (`type`, `additionalProperties`, `required`, `enum`, ...). */
  keyword: string;
}

/** An object checked (problems empty when valid, notes on what was not checked), or skipped. */
export type ObjectVerdict =
  { checked: true; problems: ObjectProblem[]; notes: string[] } | { checked: false; note: string };

/** `Deployment team-a/web`, `ClusterRole reader`, `ConfigMap (no name)`. */
export function objectLabel(object: Record<string, unknown>): string {
  const kind = typeof object.kind === 'string' && object.kind ? object.kind : '(no kind)';
  const metadata = (object.metadata ?? {}) as Record<string, unknown>;
  const name = typeof metadata.name === 'string' && metadata.name ? metadata.name : '(no name)';
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : '';
  return namespace ? `${kind} ${namespace}/${name}` : `${kind} ${name}`;
}

function pointerTo(instancePath: string, property: string): string {
  return `${instancePath}/${property.replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

function quoted(values: unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join(', ');
}

type Finding = Pick<ObjectProblem, 'path' | 'message' | 'expected' | 'actual'>;
type Describe = (error: ErrorObject, path: string) => Finding;

const FINDINGS: Readonly<Record<string, Describe>> = {
  required: (e) => {
    const field = String(e.params.missingProperty);
    return {
      path: toFieldPath(pointerTo(e.instancePath, field)),
      message: 'Required value',
      expected: 'a value',
      actual: 'absent',
    };
  },
  additionalProperties: (e) => {
    const field = String(e.params.additionalProperty);
    const actual = typeName((e.data as Record<string, unknown>)[field]);
    return {
      path: toFieldPath(pointerTo(e.instancePath, field)),
      message: 'unknown field (strict field validation)',
      expected: 'a field the schema declares',
      actual,
    };
  },
  type: (e, path) => {
    const types = [e.params.type].flat().map(String);
    const expected =
      e.parentSchema?.format === 'quantity'
        ? 'a quantity (string or number)'
        : types.filter((t) => t !== 'null').join(' or ');
    return { path, ...invalid(e, `must be of type ${expected}`), expected };
  },
  enum: (e, path) => {
    const allowed = (e.params.allowedValues as unknown[]).filter((v) => v !== '' && v !== null);
    const expected = `one of ${quoted(allowed)}`;
    return {
      path,
      message: `Unsupported value (a ${typeName(e.data)} not in the list): supported values: ${quoted(allowed)}`,
      expected,
      actual: typeName(e.data),
    };
  },
  format: (e, path) => {
    const format = String(e.params.format);
    const expected = FORMAT_EXPECTATIONS[format] ?? `format ${format}`;
    return { path, ...invalid(e, `must be ${expected}`), expected };
  },
  pattern: (e, path) => {
    const expected = `a string matching ${String(e.params.pattern)}`;
    return { path, ...invalid(e, `must match ${String(e.params.pattern)}`), expected };
  },
  'x-kubernetes-list-map-keys': (e, path) => {
    const keys = (e.schema as string[]).join(', ');
    return {
      path: `${path}[${String(e.params.index)}]`,
      message: `Duplicate value: an earlier item has the same ${keys}`,
      expected: `items with distinct ${keys}`,
      actual: 'object',
    };
  },
  uniqueItems: (e, path) => {
    const [earlier, later] = [Number(e.params.i), Number(e.params.j)].sort((a, b) => a - b);
    return {
      path: `${path}[${later}]`,
      message: `Duplicate value: the same as item ${earlier} (a set)`,
      expected: 'distinct items',
      actual: typeName((e.data as unknown[])[later ?? 0]),
    };
  },
  'x-kubernetes-validations': (e, path) => ({
    path,
    ...invalid(e, e.message ?? 'failed a validation rule'),
    expected: 'a value the rule accepts',
  }),
};

/** `Invalid value: "string": <what it must be>`, the API server's wording, without the value. */
function invalid(e: ErrorObject, must: string): { message: string; actual: string } {
  const actual = typeName(e.data);
  return { message: `Invalid value: "${actual}": ${must}`, actual };
}

/** Any other keyword (length, bounds, item and property counts, combinators). */
function generic(e: ErrorObject, path: string): Finding {
  const must = e.message ?? `must satisfy ${e.keyword}`;
  return { path, ...invalid(e, must), expected: `a value that ${must.replace(/^must /, 'does ')}` };
}

/**
 * The problems of one object from the errors of an ajv validator compiled with `verbose` (the
 * failing data and schema in each error). Errors inside anyOf/oneOf/not branches are left to the
 * combinator's own; a field of the wrong type reports its type only.
 */
export function objectProblems(label: string, errors: ErrorObject[]): ObjectProblem[] {
  const problems = errors
    .filter((e) => !isBranchError(e))
    .map((e): ObjectProblem => {
      const path = toFieldPath(e.instancePath);
      const finding = (FINDINGS[e.keyword] ?? generic)(e, path);
      return { ...finding, object: label, keyword: e.keyword, reason: TemplateReason.RenderFailed };
    });
  return withoutTypeFollowUps(dedupe(problems));
}

/** ajv reports a failing $ref'd schema once per path it was reached by: once is enough. */
function dedupe(problems: ObjectProblem[]): ObjectProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.path}\u0000${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Problems of a nested check (a custom resource's metadata), moved under `prefix`. */
export function underField(prefix: string, problems: ObjectProblem[]): ObjectProblem[] {
  return problems.map((p) => ({ ...p, path: p.path ? `${prefix}.${p.path}` : prefix }));
}
