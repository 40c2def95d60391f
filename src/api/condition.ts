// Condition shape (Kubernetes metav1.Condition) and every condition type and reason that
// Templates and TemplateInstances report (SPEC §1, §2).

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  /** RFC 3339; changes only when `status` changes. */
  lastTransitionTime: string;
  observedGeneration?: number;
}

export const TemplateConditionType = {
  Valid: 'Valid',
  DryRunRendered: 'DryRunRendered',
  Deleting: 'Deleting',
  /** The newest revision rendered and dry-run for every instance before any moves (ADR 0031). */
  Preflight: 'Preflight',
  /** The kind of spec.api is served by the API server (ADR 0032). */
  APIPublished: 'APIPublished',
} as const;

export const TemplateReason = {
  ValidationSucceeded: 'ValidationSucceeded',
  ValidationFailed: 'ValidationFailed',
  SpecInvalid: 'SpecInvalid',
  RenderSucceeded: 'RenderSucceeded',
  RenderFailed: 'RenderFailed',
  DryRunSkipped: 'DryRunSkipped',
  DeletionBlocked: 'DeletionBlocked',
  PreflightRunning: 'PreflightRunning',
  PreflightPassed: 'PreflightPassed',
  PreflightFailed: 'PreflightFailed',
  /** spec.api (ADR 0032): the group is not allowed for the Template's namespace. */
  APIGroupNotAllowed: 'APIGroupNotAllowed',
  /** spec.api cannot make a valid CRD (a reserved field name, a default it cannot hold). */
  APIInvalid: 'APIInvalid',
  /** spec.api's kind is published by another Template, or its CRD is not Stencil's. */
  APIConflict: 'APIConflict',
  /**
   * A name of spec.api's kind (kind, plural, singular or short name) is one a served resource, or
   * Stencil's own API, already answers to: kubectl would resolve it to the new kind.
   */
  APIShadowsResource: 'APIShadowsResource',
  /** The change would break existing instances of the kind, and is not allowed. */
  APIChangeRefused: 'APIChangeRefused',
  APIEstablished: 'APIEstablished',
  APIPending: 'APIPending',
  /** spec.api was removed (or the Template deleted) while instances of the kind exist. */
  APIUnpublishBlocked: 'APIUnpublishBlocked',
} as const;

export const InstanceConditionType = {
  TemplateResolved: 'TemplateResolved',
  TargetNamespaceAllowed: 'TargetNamespaceAllowed',
  ParametersValid: 'ParametersValid',
  Rendered: 'Rendered',
  Applied: 'Applied',
  Synced: 'Synced',
  /** True while some rendered resource is InProgress or Unknown. */
  Progressing: 'Progressing',
  /** True while some rendered resource is Failed. */
  Degraded: 'Degraded',
  Ready: 'Ready',
} as const;

/** Order in which instance conditions are evaluated; `Ready` copies the first failing reason. */
export const INSTANCE_CONDITION_ORDER = [
  InstanceConditionType.TemplateResolved,
  InstanceConditionType.TargetNamespaceAllowed,
  InstanceConditionType.ParametersValid,
  InstanceConditionType.Rendered,
  InstanceConditionType.Applied,
  InstanceConditionType.Synced,
] as const;

export const InstanceReason = {
  Success: 'Success',
  TemplateNotFound: 'TemplateNotFound',
  /**
   * The Template names no ServiceAccount to act as (spec.serviceAccountName) and the operator
   * has no --default-service-account (ADR 0035): nothing is read or applied.
   */
  ServiceAccountNotSet: 'ServiceAccountNotSet',
  /** The pinned TemplateRevision does not exist. */
  RevisionNotFound: 'RevisionNotFound',
  /** spec.ttl or stencil.dev/expires-at cannot be read. */
  InvalidTTL: 'InvalidTTL',
  /** The Template's maxTTL / requireTTL refuse the lifetime asked for. */
  TTLNotAllowed: 'TTLNotAllowed',
  NamespaceNotPermitted: 'NamespaceNotPermitted',
  AllParametersResolved: 'AllParametersResolved',
  InvalidParameter: 'InvalidParameter',
  OverrideNotAllowed: 'OverrideNotAllowed',
  ParameterResolutionFailed: 'ParameterResolutionFailed',
  ReferenceNotPermitted: 'ReferenceNotPermitted',
  /** --authorize-sources=requester: the instance's requester may not read a source (ADR 0020). */
  SourceNotAuthorized: 'SourceNotAuthorized',
  TemplateExecutionFailed: 'TemplateExecutionFailed',
  /** A rendered resource does not fit the schema of its kind (issue #26): nothing is applied. */
  InvalidResource: 'InvalidResource',
  /** The render ran past --render-timeout and was stopped (docs/adr/0018-render-pool.md). */
  RenderTimeout: 'RenderTimeout',
  ApplyFailed: 'ApplyFailed',
  /** Applied so far and waiting on the cluster (a CRD this render installs to be served). */
  Waiting: 'Waiting',
  SyncActive: 'SyncActive',
  /** Some rendered resource is not Current yet (Ready, Progressing). */
  ResourcesInProgress: 'ResourcesInProgress',
  /** Some rendered resource is Failed (Ready, Degraded). */
  ResourceFailed: 'ResourceFailed',
  AllResourcesCurrent: 'AllResourcesCurrent',
  Reconciled: 'Reconciled',
  /** The instance is being deleted and some of what it owns cannot be deleted (Ready). */
  DeleteFailed: 'DeleteFailed',
} as const;

export type InstanceReasonName = (typeof InstanceReason)[keyof typeof InstanceReason];
export type TemplateReasonName = (typeof TemplateReason)[keyof typeof TemplateReason];
