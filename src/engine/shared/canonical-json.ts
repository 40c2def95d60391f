// Deterministic JSON (keys sorted at every level): the one text that equal values share, for
// comparing statuses and specs and for hashing contents. A leaf: it imports nothing, so any
// module may use it without joining an import cycle.

/** JSON.stringify with the keys of every object sorted; arrays keep their order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(
        Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
          a < b ? -1 : a > b ? 1 : 0,
        ),
      );
    }
    return v;
  });
}
