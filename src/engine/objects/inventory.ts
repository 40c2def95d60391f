// What an instance owns: ownership stamping (labels, annotation, ownerReference), resource
// identities and GVK keys, and the install order of SPEC §6 (deletion runs it in reverse).
import { instanceKeyName, publishedKindOf } from '../shared/instance-key.ts';
import { createHash } from 'node:crypto';
import type { KubeObject, OwnerReference } from '../../api/object-meta.ts';
import type { SyncMode } from '../../api/template.ts';
import {
  ANNOTATION_INSTANCE_REF,
  ANNOTATION_WAVE,
  API_VERSION,
  LABEL_APPLYSET_PART_OF,
  LABEL_INSTANCE_NAME,
  LABEL_INSTANCE_NAMESPACE,
  LABEL_INSTANCE_UID,
  LABEL_SYNC_MODE,
  TEMPLATE_INSTANCE_KIND,
} from '../../api/well-known.ts';
import { groupOf, groupVersionOf } from './resource-scope.ts';

export interface Owner {
  name: string;
  namespace: string;
  uid: string;
  /** The owner's kind when it is not a TemplateInstance: a kind a Template publishes (ADR 0032). */
  apiVersion?: string;
  kind?: string;
}

const INSTALL_ORDER = [
  'Namespace',
  'NetworkPolicy',
  'ResourceQuota',
  'LimitRange',
  'PodDisruptionBudget',
  'ServiceAccount',
  'Secret',
  'ConfigMap',
  'StorageClass',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'Service',
  'DaemonSet',
  'Pod',
  'ReplicationController',
  'ReplicaSet',
  'Deployment',
  'HorizontalPodAutoscaler',
  'StatefulSet',
  'Job',
  'CronJob',
  'IngressClass',
  'Ingress',
  'APIService',
];
const RANK = new Map(INSTALL_ORDER.map((kind, i) => [kind, i]));

/** `<group>/<version>/<kind>`, the form of `status.trackedGVKs` (core group is empty). */
export function gvkKey(object: { apiVersion: string; kind: string }): string {
  const { group, version } = groupVersionOf(object.apiVersion);
  return `${group}/${version}/${object.kind}`;
}

/** Inverse of gvkKey. */
export function parseGvkKey(key: string): { apiVersion: string; kind: string } | undefined {
  const parts = key.split('/');
  if (parts.length !== 3 || !parts[1] || !parts[2]) return undefined;
  const [group, version, kind] = parts as [string, string, string];
  return { apiVersion: group ? `${group}/${version}` : version, kind };
}

export interface ObjectId {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  /** Its `stencil.dev/wave`, when known: deletes run in reverse wave order. */
  wave?: number;
  /**
   * The uid of the object that was seen, when known: a delete then removes only that object,
   * never one re-created under the same name since (a Conflict instead).
   */
  uid?: string;
  /** Seen with a deletionTimestamp: already being deleted, waiting on its finalizers. */
  terminating?: boolean;
}

/** An object, or a reference to one (`renderedResources` entries, ObjectIds). */
export interface ObjectLike {
  kind: string;
  metadata?: { name?: string; namespace?: string };
  name?: string;
  namespace?: string;
}

function nameAndNamespace(object: ObjectLike): { name: string; namespace: string } {
  return {
    name: object.metadata?.name ?? object.name ?? '',
    namespace: object.metadata?.namespace ?? object.namespace ?? '',
  };
}

/** Identity of an object regardless of version: group, kind, namespace, name. */
export function resourceKey(object: ObjectLike & { apiVersion: string }): string {
  const { name, namespace } = nameAndNamespace(object);
  return `${groupOf(object.apiVersion)}/${object.kind}/${namespace}/${name}`;
}

/** `Deployment team-a/web`, for messages. */
export function describeObject(object: ObjectLike): string {
  const { name, namespace } = nameAndNamespace(object);
  return `${object.kind} ${namespace ? `${namespace}/` : ''}${name}`;
}

/** The wave of a rendered or live object (`stencil.dev/wave`, default 0; see waveProblem). */
export function waveOf(object: { metadata?: { annotations?: Record<string, string> } }): number {
  const value = object.metadata?.annotations?.[ANNOTATION_WAVE];
  return value !== undefined && WAVE.test(value) ? Number(value) : 0;
}

const WAVE = /^-?\d{1,9}$/;

/** Why an object's `stencil.dev/wave` is not usable, or nothing. */
export function waveProblem(object: KubeObject): string | undefined {
  const value = object.metadata.annotations?.[ANNOTATION_WAVE];
  if (value === undefined || WAVE.test(value)) return undefined;
  return `${describeObject(object)}: ${ANNOTATION_WAVE} must be a whole number, got "${value}"`;
}

/**
 * Compares two objects by install order: lower waves first, then the listed kinds, then by
 * kind, then name.
 */
export function compareInstallOrder(
  a: { kind: string; name: string; wave?: number },
  b: { kind: string; name: string; wave?: number },
): number {
  if ((a.wave ?? 0) !== (b.wave ?? 0)) return (a.wave ?? 0) - (b.wave ?? 0);
  const rankA = RANK.get(a.kind) ?? INSTALL_ORDER.length;
  const rankB = RANK.get(b.kind) ?? INSTALL_ORDER.length;
  if (rankA !== rankB) return rankA - rankB;
  if (a.kind !== b.kind) return a.kind < b.kind ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export function sortForInstall(objects: KubeObject[]): KubeObject[] {
  const key = (o: KubeObject): { kind: string; name: string; wave: number } => ({
    kind: o.kind,
    name: o.metadata.name ?? '',
    wave: waveOf(o),
  });
  return [...objects].sort((a, b) => compareInstallOrder(key(a), key(b)));
}

/** Label values are limited to 63 characters: longer names keep a prefix and a hash suffix. */
export function labelValue(text: string): string {
  if (text.length <= 63) return text;
  const digest = createHash('sha256').update(text).digest('hex').slice(0, 8);
  return `${text.slice(0, 54).replace(/[^A-Za-z0-9]+$/, '')}-${digest}`;
}

/**
 * The ApplySet id of an instance: `applyset-` + base64url(sha256(name.namespace.kind.group)) +
 * `-v1`, as the specification fixes it, so any ApplySet-aware tool finds the same parent.
 */
/** The Owner the objects an instance renders name (a TemplateInstance, or a typed instance). */
export function instanceOwner(instance: {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; uid?: string };
}): Owner {
  return {
    name: instance.metadata.name ?? '',
    namespace: instance.metadata.namespace ?? '',
    uid: instance.metadata.uid ?? '',
    ...ownerKindOf(instance),
  };
}

/** The kind an Owner names: nothing for a TemplateInstance, the typed instance's own otherwise. */
export function ownerKindOf(instance: {
  apiVersion: string;
  kind: string;
}): Pick<Owner, 'apiVersion' | 'kind'> {
  return publishedKindOf(instance) === undefined
    ? {}
    : { apiVersion: instance.apiVersion, kind: instance.kind };
}

export function applySetId(owner: {
  name: string;
  namespace: string;
  apiVersion?: string;
  kind?: string;
}): string {
  const gknn = [
    owner.name,
    owner.namespace,
    owner.kind ?? TEMPLATE_INSTANCE_KIND,
    groupOf(owner.apiVersion ?? API_VERSION),
  ].join('.');
  const hash = createHash('sha256').update(gknn).digest('base64url');
  return `applyset-${hash}-v1`;
}

export function ownerReference(owner: Owner): OwnerReference {
  return {
    apiVersion: owner.apiVersion ?? API_VERSION,
    kind: owner.kind ?? TEMPLATE_INSTANCE_KIND,
    name: owner.name,
    uid: owner.uid,
    controller: true,
  };
}

/**
 * Returns a copy of `object` carrying Stencil's ownership labels (the ApplySet's among them) and
 * annotation, plus an
 * ownerReference to the instance when it lives in the instance's namespace (no
 * blockOwnerDeletion, so deleting an instance never waits on the garbage collector).
 */
export function stampOwnership(object: KubeObject, owner: Owner, syncMode: SyncMode): KubeObject {
  const metadata = { ...object.metadata };
  metadata.labels = {
    ...(metadata.labels ?? {}),
    [LABEL_INSTANCE_UID]: owner.uid,
    [LABEL_INSTANCE_NAME]: labelValue(owner.name),
    [LABEL_INSTANCE_NAMESPACE]: owner.namespace,
    [LABEL_SYNC_MODE]: syncMode,
    [LABEL_APPLYSET_PART_OF]: applySetId(owner),
  };
  metadata.annotations = {
    ...(metadata.annotations ?? {}),
    // A typed instance's names its kind (`name@Kind.group`), so strict mode finds it (ADR 0032).
    [ANNOTATION_INSTANCE_REF]: `${owner.namespace}/${instanceKeyName({
      apiVersion: owner.apiVersion ?? API_VERSION,
      kind: owner.kind ?? TEMPLATE_INSTANCE_KIND,
      metadata: owner,
    })}`,
  };
  if (metadata.namespace === owner.namespace) {
    const others = (metadata.ownerReferences ?? []).filter((ref) => ref.uid !== owner.uid);
    metadata.ownerReferences = [...others, ownerReference(owner)];
  }
  return { ...object, metadata };
}
