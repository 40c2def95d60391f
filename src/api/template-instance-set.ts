// The TemplateInstanceSet custom resource (ADR 0014), mirroring
// config/crd/stencil.dev_templateinstancesets.yaml: one cluster-scoped object that keeps a
// TemplateInstance in every namespace its selector matches.
import type { Condition } from './condition.ts';
import type { LabelSelector, ObjectMeta } from './object-meta.ts';
import type { ParameterValue, TemplateRef } from './template-instance.ts';

export interface InstanceSetTemplate {
  /** Labels and annotations every stamped instance carries. */
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  /** A TemplateInstance spec without `ttl`; `templateRef.namespace` is required. */
  spec: {
    templateRef: TemplateRef & { namespace: string };
    parameters?: ParameterValue[];
  };
}

export interface InstanceSetOverrides {
  /**
   * For each listed parameter the stamped instance reads key `<parameter>` of this ConfigMap in
   * its own namespace, falling back to the value of lower precedence.
   */
  configMap?: { name: string; parameters: string[] };
}

export interface TemplateInstanceSetSpec {
  namespaceSelector: LabelSelector;
  /** Name of every stamped instance; default the Set's own name. */
  instanceName?: string;
  template: InstanceSetTemplate;
  overrides?: InstanceSetOverrides;
  /** A namespace that stops matching keeps its instance (released) instead of losing it. */
  preserveOnRemoval?: boolean;
}

export interface FailingNamespace {
  namespace: string;
  reason: string;
  message: string;
}

export interface TemplateInstanceSetStatus {
  observedGeneration?: number;
  /** Namespaces the selector matches (those the operator watches). */
  desired?: number;
  /** Of them, those whose instance is Ready. */
  ready?: number;
  /** Of them, those refused (policy, conflict, override) or whose instance Failed. */
  failed?: number;
  /** The first failing namespaces by name (at most {@link MAX_FAILING_LISTED}); `failed` counts all. */
  failingNamespaces?: FailingNamespace[];
  conditions?: Condition[];
}

export interface TemplateInstanceSet {
  apiVersion: string;
  kind: 'TemplateInstanceSet';
  metadata: ObjectMeta;
  spec: TemplateInstanceSetSpec;
  status?: TemplateInstanceSetStatus;
}

/** How many failing namespaces status lists; the `failed` count stays exact. */
export const MAX_FAILING_LISTED = 20;

export const InstanceSetConditionType = { Ready: 'Ready' } as const;

export const InstanceSetReason = {
  /** Every desired namespace has a Ready instance. */
  AllReady: 'AllReady',
  /** Some instances are not Ready yet, or some namespaces failed. */
  NotReady: 'NotReady',
  TemplateNotFound: 'TemplateNotFound',
  /** The Set's own spec cannot be acted on (selector, overrides): nothing was changed. */
  InvalidSpec: 'InvalidSpec',
} as const;

/** Why one namespace has no working instance (status.failingNamespaces[].reason). */
export const NamespaceFailureReason = {
  /** The Template's targetNamespaces refuse the namespace: no instance is created there. */
  NamespaceNotPermitted: 'NamespaceNotPermitted',
  /** An instance of that name exists and was not stamped by this Set: it is left alone. */
  Conflict: 'Conflict',
  /** A namespace label/annotation override does not fit the parameter. */
  InvalidOverride: 'InvalidOverride',
  /** The stamped instance reports Failed (its Ready condition's reason follows). */
  InstanceFailed: 'InstanceFailed',
} as const;
