// The API server's pruning of nulls before it validates a custom resource
// (PruneNonNullableNullsWithoutDefaults): a null in a field whose schema is not nullable and has
// no default is dropped, so offline validation must drop it too or it refuses what the server takes.

/** The parts of an OpenAPI v3 schema node the pruning walks (other keywords are ignored). */
export interface SchemaNode {
  [keyword: string]: unknown;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  items?: SchemaNode;
  nullable?: boolean;
  default?: unknown;
}

/**
 * A copy of `value` without the nulls the API server prunes. Data under a node with no
 * properties/items/additionalProperties (x-kubernetes-preserve-unknown-fields) is kept as it is.
 */
export function pruneNulls(value: unknown, schema: SchemaNode | undefined): unknown {
  if (!schema || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => pruneNulls(item, schema.items));
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const childSchema =
      schema.properties?.[key] ??
      (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    if (child === null && childSchema && !childSchema.nullable && childSchema.default === undefined)
      continue;
    out[key] = pruneNulls(child, childSchema);
  }
  return out;
}
