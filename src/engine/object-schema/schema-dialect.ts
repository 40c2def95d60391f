// How a Kubernetes schema becomes a JSON Schema ajv checks the way the API server does (ADR 0029):
// objects are closed (strict field validation: an unknown field is an error) unless
// x-kubernetes-preserve-unknown-fields says otherwise, int-or-string is an integer or a string, and
// so on. Two dialects: the built-in kinds' bundle, and the openAPIV3Schema of a CRD.
import { compileCel, isTransitionRule, missingFunctions } from '../crd-schema/cel.ts';

/** A schema node as JSON: keywords to values. */
export type SchemaNode = Record<string, unknown>;

const PRESERVE = 'x-kubernetes-preserve-unknown-fields';

function isObjectNode(node: SchemaNode): boolean {
  return node.type === 'object' || node.properties !== undefined;
}

/**
 * Strict field validation rejects a field the schema does not declare, in an object that neither
 * preserves unknown fields nor is a map (additionalProperties).
 */
function closed(node: SchemaNode): SchemaNode {
  if (!isObjectNode(node) || node.additionalProperties !== undefined || node[PRESERVE] === true) {
    return node;
  }
  return { ...node, additionalProperties: false };
}

function mapChildren(node: SchemaNode, convert: (child: SchemaNode) => SchemaNode): SchemaNode {
  const out: SchemaNode = { ...node };
  if (node.properties) {
    out.properties = Object.fromEntries(
      Object.entries(node.properties as Record<string, SchemaNode>).map(([name, child]) => [
        name,
        convert(child),
      ]),
    );
  }
  for (const key of ['items', 'additionalProperties'] as const) {
    const child = node[key];
    if (typeof child === 'object' && child !== null) out[key] = convert(child as SchemaNode);
  }
  return out;
}

/**
 * A definition of the built-in bundle (tools/k8s-schemas.ts), as ajv checks it. An enum also
 * takes the empty string: Go decodes it as the field's zero value, the same as leaving the field
 * out, and the server defaults most such fields (`imagePullPolicy: ""` is accepted). Fields
 * whose Go validation refuses an empty value then pass here and fail the dry run: the offline
 * check errs towards accepting.
 */
export function builtInSchema(node: SchemaNode): SchemaNode {
  let out = mapChildren(node, builtInSchema);
  if (node['x-kubernetes-int-or-string'] === true) out = { ...out, type: ['integer', 'string'] };
  const values = node.enum as unknown[] | undefined;
  if (Array.isArray(values) && !values.includes('')) out = { ...out, enum: [...values, ''] };
  return closed(out);
}

/** The keywords of a CRD's JSONSchemaProps that change what is valid. Others are dropped. */
const CRD_KEYWORDS = new Set([
  'type',
  'format',
  'properties',
  'additionalProperties',
  'items',
  'required',
  'enum',
  'maximum',
  'minimum',
  'exclusiveMaximum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'maxProperties',
  'minProperties',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'nullable',
  PRESERVE,
  'x-kubernetes-int-or-string',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-validations',
]);

/** What converting a CRD schema found that the validator must know or the user should hear. */
export interface CrdConversion {
  schema: SchemaNode;
  /** Formats the schema names: ajv must know each (those it does not check become no-ops). */
  formats: Set<string>;
  /** CEL rules our CEL cannot evaluate (Kubernetes CEL libraries): not checked offline. */
  skippedRules: string[];
}

/**
 * A CRD version's openAPIV3Schema as ajv checks it, as the API server checks a custom resource
 * under fieldValidation=Strict. The root's apiVersion and kind are strings whatever the schema
 * says; its metadata is left open here and checked as a built-in ObjectMeta by the caller.
 */
export function crdSchema(openAPIV3Schema: SchemaNode): CrdConversion {
  const conversion: CrdConversion = { schema: {}, formats: new Set(), skippedRules: [] };
  const properties = (openAPIV3Schema.properties ?? {}) as Record<string, SchemaNode>;
  const root = {
    ...openAPIV3Schema,
    type: 'object',
    properties: {
      ...properties,
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { ...properties.metadata, type: 'object', [PRESERVE]: true },
    },
  };
  conversion.schema = convertCrdNode(root, false, conversion);
  return conversion;
}

function convertCrdNode(node: SchemaNode, inBranch: boolean, found: CrdConversion): SchemaNode {
  let out: SchemaNode = {};
  for (const [key, value] of Object.entries(node)) if (CRD_KEYWORDS.has(key)) out[key] = value;
  out = mapChildren(out, (child) => convertCrdNode(child, inBranch, found));
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    if (Array.isArray(out[key])) {
      out[key] = (out[key] as SchemaNode[]).map((branch) => convertCrdNode(branch, true, found));
    }
  }
  if (typeof out.not === 'object' && out.not !== null) {
    out.not = convertCrdNode(out.not as SchemaNode, true, found);
  }
  if (typeof out.format === 'string') found.formats.add(out.format);
  out = openApiBounds(out);
  if (out['x-kubernetes-int-or-string'] === true) out.type = ['integer', 'string'];
  out = nullable(out);
  if (out['x-kubernetes-list-type'] === 'set') out.uniqueItems = true;
  if (out['x-kubernetes-embedded-resource'] === true) out = embedded(out);
  if (Array.isArray(out['x-kubernetes-validations'])) out = celRules(out, found);
  return inBranch ? out : closed(out);
}

/** OpenAPI 3.0's `exclusiveMaximum: true` beside `maximum` is draft 2019's number form. */
function openApiBounds(node: SchemaNode): SchemaNode {
  const out = { ...node };
  for (const [exclusive, bound] of [
    ['exclusiveMaximum', 'maximum'],
    ['exclusiveMinimum', 'minimum'],
  ] as const) {
    if (typeof out[exclusive] !== 'boolean') continue;
    if (out[exclusive] === true && typeof out[bound] === 'number') {
      out[exclusive] = out[bound];
      delete out[bound];
    } else delete out[exclusive];
  }
  return out;
}

/** `nullable: true` lets null through (and into an enum); without a type, null passes anyway. */
function nullable(node: SchemaNode): SchemaNode {
  if (node.nullable === undefined) return node;
  const { nullable: isNullable, ...out } = node;
  if (isNullable !== true || out.type === undefined) return out;
  const types = Array.isArray(out.type) ? (out.type as string[]) : [out.type as string];
  out.type = [...types, 'null'];
  const values = out.enum as unknown[] | undefined;
  if (Array.isArray(values) && !values.includes(null)) out.enum = [...values, null];
  return out;
}

/** An embedded object has a non-empty apiVersion and kind, and ObjectMeta (not checked here). */
function embedded(node: SchemaNode): SchemaNode {
  const properties = (node.properties ?? {}) as Record<string, SchemaNode>;
  const required = (node.required ?? []) as string[];
  return {
    ...node,
    type: 'object',
    properties: {
      ...properties,
      apiVersion: { ...properties.apiVersion, type: 'string', minLength: 1 },
      kind: { ...properties.kind, type: 'string', minLength: 1 },
      metadata: { type: 'object', [PRESERVE]: true },
    },
    required: [...new Set([...required, 'apiVersion', 'kind'])],
  };
}

/**
 * The rules our CEL can evaluate, with their static message only: a messageExpression may quote
 * the value, which may come from a Secret. A rule calling a function our CEL lacks would always
 * fail here: it is left out and reported as not checked.
 */
function celRules(node: SchemaNode, found: CrdConversion): SchemaNode {
  const rules = (node['x-kubernetes-validations'] as { rule: string; message?: string }[]).filter(
    ({ rule }) => {
      if (isTransitionRule(rule)) return false;
      try {
        compileCel(rule);
        if (missingFunctions(rule).length === 0) return true;
      } catch {
        // Not CEL we can read: the API server took the CRD, so it is a dialect we lack.
      }
      found.skippedRules.push(rule);
      return false;
    },
  );
  const out = { ...node };
  if (rules.length === 0) delete out['x-kubernetes-validations'];
  else {
    out['x-kubernetes-validations'] = rules.map(({ rule, message }) =>
      message === undefined ? { rule } : { rule, message },
    );
  }
  return out;
}
