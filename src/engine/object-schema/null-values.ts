// Nulls in a built-in object, as the API server's Go decoding reads them.

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `value` without the members of objects that are null. The API server decodes a built-in kind
 * into Go structs, where a null leaves the field at its zero value, as if absent (`replicas:
 * null`, `creationTimestamp: null` are accepted). Array items stay: a null item is checked.
 * Returns `value` itself when it holds no such null.
 */
export function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) {
    let changed = false;
    const items = value.map((item) => {
      const next = withoutNulls(item);
      changed ||= next !== item;
      return next;
    });
    return changed ? items : value;
  }
  if (!isRecord(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const [key, child] of Object.entries(value)) {
    const next = child === null ? undefined : withoutNulls(child);
    if (next !== child) {
      out ??= { ...value };
      if (next === undefined) delete out[key];
      else out[key] = next;
    }
  }
  return out ?? value;
}
