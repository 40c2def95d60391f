// Well-known names of the Stencil API: group, version, kinds, labels, annotations, finalizers
// and the field manager. Every other module refers to these constants, never to the strings.

export const GROUP = 'stencil.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export const TEMPLATE_KIND = 'Template';
export const TEMPLATE_INSTANCE_KIND = 'TemplateInstance';
export const TEMPLATE_REVISION_KIND = 'TemplateRevision';
export const TEMPLATE_PLURAL = 'templates';
export const TEMPLATE_REVISION_PLURAL = 'templaterevisions';
export const TEMPLATE_INSTANCE_PLURAL = 'templateinstances';

/** Field manager for every write the operator makes. */
export const FIELD_MANAGER = 'stencil';

export const LABEL_INSTANCE_UID = `${GROUP}/instance-uid`;
export const LABEL_INSTANCE_NAME = `${GROUP}/instance-name`;
export const LABEL_INSTANCE_NAMESPACE = `${GROUP}/instance-namespace`;
export const LABEL_SYNC_MODE = `${GROUP}/sync-mode`;

/** On a TemplateRevision: the Template it belongs to, and its number. */
export const LABEL_TEMPLATE = `${GROUP}/template`;
export const LABEL_REVISION = `${GROUP}/revision`;

export const ANNOTATION_INSTANCE_REF = `${GROUP}/instance-ref`;
/** `<namespace>/<instance-name>`: lets that instance take over an existing object. */
export const ANNOTATION_ADOPT = `${GROUP}/adopt`;
/** Any change to this annotation on an instance forces a reconcile. */
export const ANNOTATION_RECONCILE_AT = `${GROUP}/reconcile-at`;
/** On a rendered object: a CEL expression over `self` that decides when it is healthy. */
export const ANNOTATION_READY_WHEN = `${GROUP}/ready-when`;
/** On a rendered object: its wave (a whole number, default 0); wave n+1 waits for n to be healthy. */
export const ANNOTATION_WAVE = `${GROUP}/wave`;

/**
 * On a rendered Deployment/StatefulSet/DaemonSet: `true` (every valueFrom parameter) or a list of
 * parameter names whose change rolls its pods; the second names rendered ConfigMaps/Secrets too.
 */
export const ANNOTATION_RESTART_ON_CHANGE = `${GROUP}/restart-on-change`;
export const ANNOTATION_RESTART_ON_CHANGE_OBJECTS = `${GROUP}/restart-on-change-objects`;
/** Stamped on the pod template: keyed hash of what restart-on-change names. */
export const ANNOTATION_SOURCES_HASH = `${GROUP}/sources-hash`;
/**
 * On every applied object: the hash of what Stencil last applied to it. A replica that has no
 * record of its own (a restart, a new leader or shard owner) trusts an object that carries the
 * hash of what it would apply and still holds every field of it: no dry run, no write.
 */
export const ANNOTATION_APPLIED_HASH = `${GROUP}/applied-hash`;
/** On a TemplateInstance: RFC 3339 time at which it is deleted with what it owns. */
export const ANNOTATION_EXPIRES_AT = `${GROUP}/expires-at`;
/**
 * On a TemplateInstance: the parameters (comma-separated) whose Template `valueFrom` migration to
 * a `secretKeyRef` the instance owner consents to (ADR 0019). Without it the literal stays.
 */
export const ANNOTATION_CONSENT_SECRET_MIGRATION = `${GROUP}/consent-secret-migration`;
/**
 * On a TemplateInstance (and a TemplateInstanceSet): who created it, as JSON `{username, uid,
 * groups, extra}`, recorded by Stencil's admission webhook under --authorize-sources=requester
 * and checked on every read of a valueFrom source (ADR 0020). Nobody else may write it.
 */
export const ANNOTATION_REQUESTER = `${GROUP}/requester`;
/** On a Template: `resume` resumes a halted rollout (removed once acted on). */
export const ANNOTATION_ROLLOUT = `${GROUP}/rollout`;

export const FINALIZER_INSTANCE = `${GROUP}/instance`;
export const FINALIZER_TEMPLATE = `${GROUP}/template`;

/** Upper bound on rendered resources per instance (SPEC §5) and on status.renderedResources. */
export const MAX_RESOURCES = 500;
/** Upper bound on rendered text per instance (SPEC §5). */
export const MAX_RENDERED_BYTES = 2 * 1024 * 1024;

export const TEMPLATE_INSTANCE_SET_KIND = 'TemplateInstanceSet';
export const TEMPLATE_INSTANCE_SET_PLURAL = 'templateinstancesets';
/** On a TemplateInstance: the TemplateInstanceSet that stamped it (and owns it). */
export const LABEL_INSTANCE_SET = `${GROUP}/instance-set`;
/** Field manager of the instances a TemplateInstanceSet stamps (server-side apply). */
export const INSTANCE_SET_FIELD_MANAGER = 'stencil-instance-set';
/** Namespace label/annotation prefix: `parameters.stencil.dev/<parameter>: <value>`. */
export const PARAMETER_OVERRIDE_PREFIX = `parameters.${GROUP}/`;

// ApplySet (KEP-3659, kubectl's `--applyset`): the instance is the parent of what it renders.
/** On the parent (a TemplateInstance): its ApplySet id, `applyset-<hash>-v1`. */
export const LABEL_APPLYSET_ID = 'applyset.kubernetes.io/id';
/** On every rendered object: the id of the instance's ApplySet. */
export const LABEL_APPLYSET_PART_OF = 'applyset.kubernetes.io/part-of';
/** On the TemplateInstance CRD: its objects may be ApplySet parents. */
export const LABEL_APPLYSET_PARENT_TYPE = 'applyset.kubernetes.io/is-parent-type';
/** On the parent: the tool that manages the set (other tools refuse to prune it). */
export const ANNOTATION_APPLYSET_TOOLING = 'applyset.kubernetes.io/tooling';
/** On the parent: every group-kind the set may hold (`Kind.group`, `Kind` for the core group). */
export const ANNOTATION_APPLYSET_GROUP_KINDS = 'applyset.kubernetes.io/contains-group-kinds';
/** On the parent: namespaces other than its own that the set's objects live in. */
export const ANNOTATION_APPLYSET_NAMESPACES = 'applyset.kubernetes.io/additional-namespaces';
/** `<tool>/<semver>`, the value of the tooling annotation. */
export const APPLYSET_TOOLING = 'stencil/v1';

/** On a generated CRD and its ClusterRoles: `<namespace>/<name>` of the Template publishing it (ADR 0032). */
export const ANNOTATION_PUBLISHED_BY = `${GROUP}/template`;
/** On a Template: `"true"` lets a breaking change of its published kind through (ADR 0032). */
export const ANNOTATION_ALLOW_BREAKING_API_CHANGES = `${GROUP}/allow-breaking-api-changes`;
/** Every object Stencil creates for a published kind (CRD, ClusterRoles) carries it. */
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_STENCIL = 'stencil';

/**
 * The user extra the operator sets on every request it makes as a Template's ServiceAccount
 * (impersonation, ADR 0035), with its own username as the value: only the operator may
 * impersonate it, so strict mode tells the operator's writes from the ServiceAccount's own.
 */
export const EXTRA_IMPERSONATED_BY = `${GROUP}/impersonated-by`;
