// Unknown fields, as kubectl's default strict field validation reports them: a field the schema
// does not declare, under an object whose schema lists its properties and neither allows other
// keys (additionalProperties) nor keeps them (x-kubernetes-preserve-unknown-fields). The API
// server would otherwise drop it without a word (pruning), so a typo such as `spec.syncMode`
// passed `stencil validate` and then did nothing (issue #43). metadata is ObjectMeta's to judge.
import type { SchemaNode } from './null-pruning.ts';

/** At most this many are listed: the first few say enough, and the output stays bounded. */
const MOST = 20;

/** The paths of the unknown fields of `value` (e.g. `spec.syncMode`), in document order. */
export function unknownFields(value: unknown, schema: SchemaNode | undefined): string[] {
  const found: string[] = [];
  walk(value, schema, '', found);
  return found;
}

function walk(value: unknown, schema: SchemaNode | undefined, path: string, found: string[]): void {
  if (!schema || value === null || typeof value !== 'object' || found.length >= MOST) return;
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) return;
  if (Array.isArray(value))
    value.forEach((item, i) => walk(item, schema.items, `${path}[${i}]`, found));
  else walkObject(value as Record<string, unknown>, schema, path, found);
}

function walkObject(
  value: Record<string, unknown>,
  schema: SchemaNode,
  path: string,
  found: string[],
): void {
  const extra =
    typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
  // Only an object whose schema lists its properties is judged: one that lists none is kept or
  // dropped whole by the API server, whatever it holds.
  const closed = schema.properties !== undefined && schema.additionalProperties !== true;
  for (const [key, child] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    const property = schema.properties?.[key] ?? extra;
    if (property) {
      if (at !== 'metadata') walk(child, property, at, found);
    } else if (closed && found.length < MOST) found.push(at);
  }
}
