// The one test for "a map" (an object that is neither null nor a list) that the engine's
// walkers of parsed YAML and JSON share.
import type { JsonObject } from '../../api/object-meta.ts';

export function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** isMap, for values known to be JSON: narrows to a map of JSON values. */
export function isJsonObject(value: unknown): value is JsonObject {
  return isMap(value);
}

/**
 * A JSON merge patch (RFC 7386) that turns `before` into `after`: a merge patch keeps every field
 * it does not mention, so a field `after` no longer has is set to null, in nested maps too. Lists
 * are replaced whole, as merge patches do. Status writes use it so nothing stale survives.
 */
export function mergePatchReplacing(before: object, after: object): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...(after as Record<string, unknown>) };
  for (const [key, old] of Object.entries(before)) {
    const next = (after as Record<string, unknown>)[key];
    if (next === undefined) patch[key] = null;
    else if (isMap(old) && isMap(next)) patch[key] = mergePatchReplacing(old, next);
  }
  return patch;
}
