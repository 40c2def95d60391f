// The key of an instance in the work queue, the dependency registry and a rollout (ADR 0032):
// `<namespace>/<name>` for a TemplateInstance, `<namespace>/<name>@<Kind>.<group>` for an object
// of a kind a Template publishes. No object name holds `@`, so the two never collide, and the
// namespace stays first: fairness and sharding go by it for both.
import { API_VERSION, TEMPLATE_INSTANCE_KIND } from '../../api/well-known.ts';

interface Identified {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string };
}

/** `Kind.group`, or undefined for a TemplateInstance. */
export function publishedKindOf(
  object: Pick<Identified, 'apiVersion' | 'kind'>,
): string | undefined {
  if (object.kind === TEMPLATE_INSTANCE_KIND && object.apiVersion === API_VERSION) return undefined;
  const slash = object.apiVersion.lastIndexOf('/');
  return `${object.kind}.${slash < 0 ? '' : object.apiVersion.slice(0, slash)}`;
}

/** The name part of an instance's key: its name, then `@Kind.group` for a typed instance. */
export function instanceKeyName(object: Identified): string {
  const kind = publishedKindOf(object);
  const name = object.metadata.name ?? '';
  return kind === undefined ? name : `${name}@${kind}`;
}

export function instanceKey(object: Identified): string {
  return `${object.metadata.namespace ?? ''}/${instanceKeyName(object)}`;
}

/** A key's name part split into the object's name and, for a typed instance, `Kind.group`. */
export function parseInstanceKeyName(name: string): { name: string; kind?: string } {
  const at = name.indexOf('@');
  return at < 0 ? { name } : { name: name.slice(0, at), kind: name.slice(at + 1) };
}
