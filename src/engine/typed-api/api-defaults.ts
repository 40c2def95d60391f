// Structural defaulting, as the API server applies a CRD's `default`s to an object it stores:
// a property absent from an object gets its default, then defaults apply inside it; list items
// are defaulted by the items' schema. Offline, a typed instance is defaulted this way before it is
// checked and read, so `stencil render` sees what the cluster would store. Pure: returns a copy.
import type { JsonValue } from '../../api/object-meta.ts';
import { isJsonObject } from '../shared/json-map.ts';
import type { SchemaObject } from './api-crd.ts';

export function withDefaults(value: JsonValue, schema: SchemaObject): JsonValue {
  if (Array.isArray(value)) {
    const items = schema.items;
    return isJsonObject(items) ? value.map((item) => withDefaults(item, items)) : value;
  }
  if (!isJsonObject(value)) return value;
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  const out: { [key: string]: JsonValue } = { ...value };
  for (const [name, property] of Object.entries(properties)) {
    if (!isJsonObject(property)) continue;
    const present = Object.hasOwn(out, name) && out[name] !== null;
    if (!present && property.default !== undefined) out[name] = structuredClone(property.default);
    if (Object.hasOwn(out, name)) out[name] = withDefaults(out[name]!, property);
  }
  return out;
}
