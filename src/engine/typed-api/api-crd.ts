// The CRD of a kind a Template publishes (ADR 0032), generated from its parameters: one spec
// field per parameter an instance may set, `spec.valueFrom.<parameter>` for sources, the pin and
// the lifetime, and exactly the TemplateInstance's status. Pure: the operator applies what this
// returns, `stencil crd` prints it, and the compatibility check compares two of them.
import { TemplateReason } from '../../api/condition.ts';
import type { JsonValue } from '../../api/object-meta.ts';
import { CRD_SCHEMAS } from '../../api/schemas.generated.ts';
import type { ApiSpec, ParameterDeclaration, Template } from '../../api/template.ts';
import {
  ANNOTATION_PUBLISHED_BY,
  LABEL_APPLYSET_PARENT_TYPE,
  LABEL_MANAGED_BY,
  MANAGED_BY_STENCIL,
} from '../../api/well-known.ts';
import { coerceParameter } from '../parameters/parameter-types.ts';
import { failure, success, type Outcome, type Problem } from '../shared/problem.ts';
import {
  apiNames,
  celFieldName,
  publisherOf,
  type ApiNames,
  type PublishedObjectMeta,
} from './api-names.ts';
import { shadowing, STENCIL_RESOURCES } from './api-shadowing.ts';

/** A JSON Schema of a CRD (structural, with the Kubernetes extensions). */
export type SchemaObject = { [key: string]: JsonValue };

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: PublishedObjectMeta;
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames?: string[];
      categories: string[];
    };
    scope: 'Namespaced';
    versions: {
      name: string;
      served: true;
      storage: true;
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: SchemaObject[];
      schema: { openAPIV3Schema: SchemaObject };
    }[];
  };
}

/** The spec fields of every typed instance; a parameter an instance may set must not take them. */
export const VALUE_FROM_FIELD = 'valueFrom';
export const PIN_FIELD = 'templateRevision';
export const TTL_FIELD = 'ttl';
const FIXED_FIELDS = new Set([VALUE_FROM_FIELD, PIN_FIELD, TTL_FIELD]);

/**
 * The CEL rule that requires a `required` parameter, literally or from a source. The
 * compatibility check finds the required fields of a published CRD by this exact text.
 */
export function requiredRule(parameter: string): string {
  const field = celFieldName(parameter);
  return `has(self.${field}) || (has(self.valueFrom) && has(self.valueFrom.${field}))`;
}

/** The generated CRD, or the problems that keep `spec.api` from making one. */
export function publishedCrd(template: Template): Outcome<CustomResourceDefinition> {
  const api = template.spec.api;
  if (!api) return failure([apiProblem('spec.api', 'the Template publishes no kind')]);
  const names = apiNames(api);
  // Stencil's own kinds are known offline: `stencil validate`, `crd` and `render` refuse them too.
  const problems: Problem[] = [...shadowing(api, STENCIL_RESOURCES).problems];
  const fields: SchemaObject = {};
  const sources: SchemaObject = {};
  const rules: SchemaObject[] = [];
  for (const [at, parameter] of (template.spec.parameters ?? []).entries()) {
    if (parameter.disableOverride) continue;
    if (FIXED_FIELDS.has(parameter.name)) {
      problems.push(
        apiProblem(
          `spec.parameters[${at}].name`,
          `a parameter an instance may set cannot be named ${parameter.name} in a typed API ` +
            `(spec.${parameter.name} is the instance's own); rename it or set disableOverride`,
        ),
      );
      continue;
    }
    const field = parameterSchema(parameter, at);
    if (!field.ok) {
      problems.push(...field.problems);
      continue;
    }
    fields[parameter.name] = field.value;
    sources[parameter.name] = sourceSchema(parameter);
    if (parameter.required)
      rules.push({
        rule: requiredRule(parameter.name),
        message: `spec.${parameter.name} or spec.valueFrom.${parameter.name} is required`,
      });
  }
  if (problems.length > 0) return failure(problems);
  const spec: SchemaObject = {
    type: 'object',
    description: `The parameters of Template ${publisherOf(template)}.`,
    // Present even when the instance gives no spec, so the fields' defaults are applied; with a
    // required parameter the spec is required instead (the API server checks a default against
    // the rules, and `{}` would fail the required one).
    ...(rules.length === 0 ? { default: {} } : {}),
    properties: {
      ...fields,
      [VALUE_FROM_FIELD]: {
        type: 'object',
        description:
          'Parameters read from a Secret, a ConfigMap or any object field (re-rendered when the ' +
          'source changes); a parameter given here wins over its literal field.',
        properties: sources,
      },
      [PIN_FIELD]: {
        type: 'integer',
        format: 'int64',
        minimum: 1,
        description:
          "Pin: render this TemplateRevision and stay on it; without it the instance follows the Template's rollout.",
      },
      [TTL_FIELD]: clone(INSTANCE_SPEC.properties.ttl),
    },
    ...(rules.length > 0 ? { 'x-kubernetes-validations': rules } : {}),
  };
  const crd = crdOf(template, api, names, spec);
  // etcd refuses a stored object over about 1.5 MiB: a CRD that large could never be applied, and
  // its Template would retry forever. Said once, at validation, with what to change. Counted in
  // UTF-8 bytes, as etcd counts: a description in CJK text takes three bytes a character.
  const size = Buffer.byteLength(JSON.stringify(crd), 'utf8');
  if (size > MAX_CRD_BYTES)
    return failure([
      apiProblem(
        'spec.parameters',
        `the generated CustomResourceDefinition would be ${Math.ceil(size / 1024)} KiB, over ` +
          `the ${MAX_CRD_BYTES / 1024} KiB Stencil publishes (the API server stores at most ` +
          'about 1.5 MiB per object): publish fewer parameters (disableOverride keeps one out of ' +
          'the API) or shorten their descriptions',
      ),
    ]);
  return success(crd);
}

/** The largest CRD Stencil generates, as compact JSON in UTF-8 bytes. */
export const MAX_CRD_BYTES = 1024 * 1024;

function crdOf(
  template: Template,
  api: ApiSpec,
  names: ApiNames,
  spec: SchemaObject,
): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: names.crdName,
      // Its objects are ApplySet parents, as TemplateInstances are (KEP-3659, ADR 0025).
      labels: { [LABEL_MANAGED_BY]: MANAGED_BY_STENCIL, [LABEL_APPLYSET_PARENT_TYPE]: 'true' },
      annotations: { [ANNOTATION_PUBLISHED_BY]: publisherOf(template) },
    },
    spec: {
      group: names.group,
      names: {
        kind: names.kind,
        listKind: names.listKind,
        plural: names.plural,
        singular: names.singular,
        ...(api.shortNames?.length ? { shortNames: [...api.shortNames] } : {}),
        categories: ['stencil', ...(api.categories ?? []).filter((c) => c !== 'stencil')],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: names.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            ...STATUS_COLUMNS,
            ...(api.printerColumns ?? []).map((c) => ({ ...c })),
            AGE_COLUMN,
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              ...(spec.default === undefined ? { required: ['spec'] } : {}),
              description: `${names.kind}: an instance of Template ${publisherOf(template)}, rendered by Stencil.`,
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec,
                status: clone(INSTANCE_STATUS),
              },
            },
          },
        },
      ],
    },
  };
}

/** The schema of a parameter's literal field: its type, constraints, default and description. */
function parameterSchema(parameter: ParameterDeclaration, at: number): Outcome<SchemaObject> {
  const schema: SchemaObject = { ...TYPE_SCHEMAS[parameter.type ?? 'any'] };
  if (parameter.description) schema.description = parameter.description;
  const typed = (value: JsonValue): JsonValue | undefined => {
    const coerced = coerceParameter({
      name: parameter.name,
      type: parameter.type,
      value,
      secret: false,
    });
    return coerced.ok ? coerced.value : undefined;
  };
  if (parameter.enum) {
    const values = parameter.enum.map(typed);
    if (values.some((v) => v === undefined || !publishable(v)))
      return failure([
        apiProblem(
          `spec.parameters[${at}].enum`,
          `an enum value does not fit type ${parameter.type}`,
        ),
      ]);
    schema.enum = values as JsonValue[];
  }
  for (const bound of ['pattern', 'minLength', 'maxLength', 'minimum', 'maximum'] as const)
    if (parameter[bound] !== undefined) schema[bound] = parameter[bound];
  if (!parameter.required && parameter.value !== undefined && parameter.value !== null) {
    const value = typed(parameter.value);
    if (value === undefined || !publishable(value))
      return failure([
        apiProblem(
          `spec.parameters[${at}].value`,
          `the default of parameter ${parameter.name} cannot be a default of the typed API ` +
            `(it must be JSON of type ${parameter.type ?? 'any'}; not NaN or Infinity)`,
        ),
      ]);
    schema.default = value;
  }
  return success(schema);
}

/** JSON can hold it: no NaN or Infinity (Go's ParseFloat accepts them, JSON does not). */
function publishable(value: JsonValue): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(publishable);
  if (value !== null && typeof value === 'object') return Object.values(value).every(publishable);
  return true;
}

/** `spec.valueFrom.<parameter>`: a TemplateInstance's valueFrom, with its defaultValue inside. */
function sourceSchema(parameter: ParameterDeclaration): SchemaObject {
  const valueFrom = clone(INSTANCE_PARAMETER.properties.valueFrom);
  const properties = valueFrom.properties as SchemaObject;
  properties.defaultValue = clone(INSTANCE_PARAMETER.properties.defaultValue);
  valueFrom.description = `Where parameter ${parameter.name} comes from (exactly one source).`;
  return valueFrom;
}

const ANY: SchemaObject = { 'x-kubernetes-preserve-unknown-fields': true };

const TYPE_SCHEMAS: Record<NonNullable<ParameterDeclaration['type']> | 'any', SchemaObject> = {
  string: { type: 'string' },
  number: { type: 'number' },
  bool: { type: 'boolean' },
  array: { type: 'array', items: ANY },
  object: { type: 'object', ...ANY },
  any: ANY,
};

type InstanceSchema = (typeof CRD_SCHEMAS)['TemplateInstance_v1alpha1'];
const INSTANCE_SPEC: InstanceSchema['properties']['spec'] =
  CRD_SCHEMAS.TemplateInstance_v1alpha1.properties.spec;
const INSTANCE_PARAMETER = INSTANCE_SPEC.properties.parameters.items;
const INSTANCE_STATUS = CRD_SCHEMAS.TemplateInstance_v1alpha1.properties.status;

/** The TemplateInstance's columns that read its status (its Template column is the kind itself). */
const STATUS_COLUMNS: SchemaObject[] = [
  { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Revision', type: 'integer', jsonPath: '.status.revision' },
  {
    name: 'Resources',
    type: 'string',
    description: 'rendered resources that are Current, of all rendered resources',
    jsonPath: '.status.readyResources',
  },
];
const AGE_COLUMN: SchemaObject = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
};

function clone<T>(value: T): SchemaObject {
  return structuredClone(value) as unknown as SchemaObject;
}

function apiProblem(path: string, message: string): Problem {
  return { path, reason: TemplateReason.APIInvalid, message };
}
