// Typed keys of the shared dependency watches: what a dependent depends on (an object read by
// GET or LIST, or the objects it owns) and which watch serves it. Routing compares these fields;
// it never parses selector strings or joined names. Ownership is a label whose value is the
// owner's uid; which label is the caller's choice (the operator passes its own), so the
// framework names none.
import type { KubeObject } from '../api/object-meta.ts';

/**
 * `source`: one object by name (GET mode) or every object of the kind in the namespace (LIST
 * mode, `name` absent; `namespace` absent = all namespaces or a cluster-scoped kind).
 * `drift`: the objects of a kind whose owner label holds `ownerUid`.
 */
export type DependencyKey =
  | { type: 'source'; apiVersion: string; kind: string; namespace?: string; name?: string }
  | { type: 'drift'; apiVersion: string; kind: string; ownerUid: string };

/**
 * The watch serving dependencies: source watches per (kind, namespace), so GETs of many objects
 * of one namespace share one watch; drift watches per kind, cluster-wide, limited to objects
 * carrying the owner label, so every owner of a kind shares one.
 */
export interface WatchKey {
  type: DependencyKey['type'];
  apiVersion: string;
  kind: string;
  namespace?: string;
}

/** A dependency and what the dependent saw of it when it registered. */
export interface Dependency {
  key: DependencyKey;
  /**
   * resourceVersion of every object the dependent read, by `namespace/name` (cluster-scoped:
   * `/name`); an object it looked for and did not find is simply absent. Undefined when the
   * dependent did not record what it read: then nothing it registered for counts as news.
   */
  observed?: Readonly<Record<string, string>>;
}

export function watchKeyOf(key: DependencyKey): WatchKey {
  return key.type === 'source'
    ? { type: 'source', apiVersion: key.apiVersion, kind: key.kind, namespace: key.namespace }
    : { type: 'drift', apiVersion: key.apiVersion, kind: key.kind };
}

/** A canonical identity for a WatchKey, for map lookups (never parsed back). */
export function watchKeyId(key: WatchKey): string {
  return JSON.stringify([key.type, key.apiVersion, key.kind, key.namespace ?? null]);
}

/** The label selector a watch lists and watches with; `ownerLabel` as in {@link concerns}. */
export function labelSelectorOf(key: WatchKey, ownerLabel: string): string | undefined {
  return key.type === 'drift' ? ownerLabel : undefined;
}

/** The route of a source dependency on the object of this name. */
export function nameRoute(name: string): string {
  return `name:${name}`;
}

/**
 * The routing value a dependency is filed under within its watch: the owner's uid (drift), the
 * object's name (GET) or `*` (LIST: any object). `routesOf` gives the values an object reaches.
 */
export function routeOf(key: DependencyKey): string {
  if (key.type === 'drift') return `uid:${key.ownerUid}`;
  return key.name === undefined ? '*' : nameRoute(key.name);
}

/** The routing values of the dependencies an object seen by a watch of `type` concerns. */
export function routesOf(type: WatchKey['type'], object: KubeObject, ownerLabel: string): string[] {
  if (type === 'drift') {
    const uid = object.metadata.labels?.[ownerLabel];
    return uid === undefined ? [] : [`uid:${uid}`];
  }
  return ['*', nameRoute(object.metadata.name ?? '')];
}

/**
 * Whether `object`, seen by the watch serving `key`, concerns the dependent holding `key`; a
 * drift dependency concerns the objects whose `ownerLabel` holds its owner's uid.
 */
export function concerns(key: DependencyKey, object: KubeObject, ownerLabel: string): boolean {
  if (key.type === 'drift') return object.metadata.labels?.[ownerLabel] === key.ownerUid;
  return key.name === undefined || key.name === object.metadata.name;
}
