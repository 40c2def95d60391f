// The TemplateInstance custom resource (SPEC §2), mirroring
// config/crd/stencil.dev_templateinstances.yaml.
import type { Condition } from './condition.ts';
import type { JsonValue, ObjectMeta } from './object-meta.ts';
import type { SyncMode } from './template.ts';

export interface KeyRef {
  name: string;
  key: string;
  namespace?: string;
}

export interface ObjectFieldRef {
  apiVersion: string;
  kind: string;
  /** Set = GET mode; omitted = LIST mode. */
  name?: string;
  namespace?: string;
  /** kubectl-style: leading dot, no braces. */
  jsonPath: string;
}

/** Exactly one source is set (enforced by the CRD). */
export interface ValueSource {
  secretKeyRef?: KeyRef;
  configMapKeyRef?: KeyRef;
  objectFieldRef?: ObjectFieldRef;
}

export interface ParameterValue {
  name: string;
  value?: JsonValue;
  valueFrom?: ValueSource;
  defaultValue?: JsonValue;
}

export interface TemplateRef {
  name: string;
  namespace?: string;
  /** Pin to this TemplateRevision (ADR 0012). */
  revision?: number;
}

export interface TemplateInstanceSpec {
  templateRef: TemplateRef;
  /** Lifetime from creation, e.g. `2h` or `7d`: then the instance is deleted with what it owns. */
  ttl?: string;
  parameters?: ParameterValue[];
}

/** Progressing: everything applied, some rendered resources are not Current yet. */
export type InstancePhase = 'Ready' | 'Progressing' | 'Failed';

/** kstatus health of a rendered object. */
export type ResourceHealth = 'Current' | 'InProgress' | 'Failed' | 'Unknown';

export interface ResolvedParameter {
  name: string;
  /** Present only when the Template sets `exposeInStatus` on the parameter. */
  value?: JsonValue;
  valueFrom?: ValueSource;
}

export interface RenderedResourceRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  /** The object's own `status.observedGeneration` as of the last reconcile, when it has one. */
  observedGeneration?: number;
  /** '' = applied; 'Failed' = a delete that did not go through and is retried. */
  status?: '' | 'Failed';
  /** Health of the live object as of the last reconcile (absent for a pending delete). */
  health?: ResourceHealth;
  /** Why it is not Current. */
  healthMessage?: string;
}

export interface TemplateInstanceStatus {
  phase?: InstancePhase;
  /** `<current>/<rendered>`, for the Resources printer column. */
  readyResources?: string;
  /** When the instance is deleted (spec.ttl or stencil.dev/expires-at), RFC 3339. */
  expiresAt?: string;
  /** The TemplateRevision the last render used (ADR 0012). */
  revision?: number;
  /** The Template's newest revision at that time: newer than `revision` = an update exists. */
  latestRevision?: number;
  observedGeneration?: number;
  resolvedTemplateRef?: { name: string; namespace: string; generation?: number };
  /** The sync mode the last pass ran under; `strict` makes the instance the platform's (ADR 0035). */
  syncMode?: SyncMode;
  /** The ServiceAccount (`namespace/name`) the last pass acted as (ADR 0035). */
  serviceAccount?: string;
  resolvedParameters?: ResolvedParameter[];
  renderedResources?: RenderedResourceRef[];
  /** `<group>/<version>/<kind>`; persisted before any apply. */
  trackedGVKs?: string[];
  frozen?: boolean;
  frozenAt?: string;
  conditions?: Condition[];
}

export interface TemplateInstance {
  apiVersion: string;
  /** `TemplateInstance`, or a kind a Template publishes, read as one (ADR 0032). */
  kind: string;
  metadata: ObjectMeta;
  spec: TemplateInstanceSpec;
  status?: TemplateInstanceStatus;
}
