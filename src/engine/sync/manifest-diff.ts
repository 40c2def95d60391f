// What a Template change does to one instance's rendered objects (`stencil diff`): the objects
// added, those changed (field by field) and those pruned (rendered before, not after). Pure.
// Objects are matched by identity as the operator's inventory matches them (group, kind,
// namespace, name: a version change of the same object is a change, not a prune and an add).
import type { JsonValue, KubeObject } from '../../api/object-meta.ts';
import { describeObject, resourceKey } from '../objects/inventory.ts';
import { isJsonObject as isMap } from '../shared/json-map.ts';

/** One field that differs; an absent side means the field is not there (added or removed). */
export interface FieldChange {
  path: string;
  from?: JsonValue;
  to?: JsonValue;
}

export interface ChangedResource {
  /** `apps/v1 Deployment team-a/web`. */
  resource: string;
  changes: FieldChange[];
}

export interface ManifestDiff {
  added: string[];
  changed: ChangedResource[];
  pruned: string[];
}

/** What a Secret's value fields show instead of their value, whatever made them. */
export const SECRET_DATA_PLACEHOLDER = '[redacted: Secret data]';

const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `spec.template`, `metadata.labels["app.kubernetes.io/name"]`, `containers[0]`. */
function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (!PLAIN_KEY.test(key)) return `${path}[${JSON.stringify(key)}]`;
  return path ? `${path}.${key}` : key;
}

function same(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((item, i) => same(item, b[i]));
  if (isMap(a) && isMap(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((k) => Object.hasOwn(b, k) && same(a[k], b[k]))
    );
  }
  return false;
}

/** The leaf-most paths where `from` and `to` differ, in document order. */
function fieldChanges(
  from: JsonValue | undefined,
  to: JsonValue | undefined,
  path: string,
  out: FieldChange[],
): void {
  if (same(from, to)) return;
  if (isMap(from) && isMap(to)) {
    const keys = [...Object.keys(from), ...Object.keys(to).filter((k) => !Object.hasOwn(from, k))];
    for (const key of keys) fieldChanges(from[key], to[key], childPath(path, key), out);
    return;
  }
  if (Array.isArray(from) && Array.isArray(to)) {
    for (let i = 0; i < Math.max(from.length, to.length); i++)
      fieldChanges(from[i], to[i], childPath(path, i), out);
    return;
  }
  out.push({
    path,
    ...(from !== undefined ? { from } : {}),
    ...(to !== undefined ? { to } : {}),
  });
}

function isSecret(object: KubeObject): boolean {
  return object.apiVersion === 'v1' && object.kind === 'Secret';
}

/**
 * A Secret's `data` and `stringData` values are secret whatever made them (a literal in the
 * Template as much as a secretKeyRef): the change is shown, its values never.
 */
function hidingSecretData(object: KubeObject, change: FieldChange): FieldChange {
  if (!isSecret(object) || !/^(data|stringData)\b/.test(change.path)) return change;
  return {
    path: change.path,
    ...(change.from !== undefined ? { from: SECRET_DATA_PLACEHOLDER } : {}),
    ...(change.to !== undefined ? { to: SECRET_DATA_PLACEHOLDER } : {}),
  };
}

function label(object: KubeObject): string {
  return `${object.apiVersion} ${describeObject(object)}`;
}

/** Compares two renders of the same instance, each in install order. */
export function diffManifests(before: KubeObject[], after: KubeObject[]): ManifestDiff {
  const previous = new Map(before.map((o) => [resourceKey(o), o]));
  const next = new Set(after.map((o) => resourceKey(o)));
  const diff: ManifestDiff = { added: [], changed: [], pruned: [] };
  for (const object of after) {
    const old = previous.get(resourceKey(object));
    if (!old) {
      diff.added.push(label(object));
      continue;
    }
    const changes: FieldChange[] = [];
    fieldChanges(old as unknown as JsonValue, object as unknown as JsonValue, '', changes);
    if (changes.length > 0)
      diff.changed.push({
        resource: label(object),
        changes: changes.map((c) => hidingSecretData(object, c)),
      });
  }
  diff.pruned = before.filter((o) => !next.has(resourceKey(o))).map(label);
  return diff;
}

export function isEmptyDiff(diff: ManifestDiff): boolean {
  return diff.added.length === 0 && diff.changed.length === 0 && diff.pruned.length === 0;
}
