// The API server's structural defaulting of a custom resource (apiextensions-apiserver, schema
// defaulting), applied before offline validation as the server applies it before validating: a
// property missing from an object, or null where its schema is not nullable, takes the schema's
// `default`; so do null list items and map values; and defaulting goes on inside what it added.
// Without it, a field required but defaulted is refused as "Required value", and CEL rules that
// read a defaulted field (Gateway API's HTTPRoute: a parentRef's group and kind, a backendRef's
// kind) fail on objects the API server accepts (issue #43).
import type { SchemaNode } from './null-pruning.ts';

const hasDefault = (schema: SchemaNode | undefined): schema is SchemaNode & { default: unknown } =>
  schema !== undefined && schema.default !== undefined;

/** The value itself, or the default that stands in for a null the schema does not allow. */
function orDefault(value: unknown, schema: SchemaNode | undefined): unknown {
  return value === null && hasDefault(schema) && schema.nullable !== true
    ? clone(schema.default)
    : value;
}

/** A copy of `value` with the schema's defaults applied, as the API server applies them. */
export function applyDefaults(value: unknown, schema: SchemaNode | undefined): unknown {
  if (!schema || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value))
    return value.map((item) => applyDefaults(orDefault(item, schema.items), schema.items));
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [key, property] of Object.entries(schema.properties ?? {}))
    if (hasDefault(property) && !Object.hasOwn(out, key)) out[key] = clone(property.default);
  const extra =
    typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
  for (const [key, child] of Object.entries(out)) {
    const childSchema = schema.properties?.[key] ?? extra;
    out[key] = applyDefaults(orDefault(child, childSchema), childSchema);
  }
  return out;
}

function clone(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}
