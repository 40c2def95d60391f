// The Template custom resource (SPEC §1), mirroring config/crd/stencil.dev_templates.yaml.
import type { Condition } from './condition.ts';
import type { JsonValue, LabelSelector, ObjectMeta } from './object-meta.ts';

export type ParameterType = 'string' | 'number' | 'bool' | 'array' | 'object';
export type SyncMode = 'off' | 'revert' | 'strict';
/** How an instance's value combines with the Template default (ADR 0013). */
export type MergeStrategy = 'replace' | 'deep' | 'union-by-key';

export interface ParameterDeclaration {
  name: string;
  type?: ParameterType;
  /** Literal default: any JSON value. Ignored for `required` parameters. */
  value?: JsonValue;
  required?: boolean;
  disableOverride?: boolean;
  exposeInStatus?: boolean;
  description?: string;
  /** Absent = `replace`. `deep` needs type object, `union-by-key` type array and `mergeKey`. */
  merge?: MergeStrategy;
  /** The field that identifies an item of a `union-by-key` list. */
  mergeKey?: string;
  /**
   * How a secretKeyRef/configMapKeyRef read becomes the value (ADR 0019): `text` (absent) decodes
   * the bytes as UTF-8 and fails on bytes that are not; `base64` keeps the stored bytes as their
   * base64 text, exactly. `base64` needs type string.
   */
  encoding?: 'text' | 'base64';
  /** Constraints (ADR 0032), checked at resolution and published in a typed API's schema. */
  enum?: JsonValue[];
  /** RE2 syntax, unanchored unless it says `^` and `$` (type string). */
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  /** Bounds of a `number` parameter. */
  minimum?: number;
  maximum?: number;
}

/** A printer column of a published kind (a CRD's additionalPrinterColumns entry). */
export interface ApiPrinterColumn {
  name: string;
  type: 'integer' | 'number' | 'string' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

/** The kind a Template publishes for its instances, backed by a generated CRD (ADR 0032). */
export interface ApiSpec {
  group: string;
  version: string;
  kind: string;
  /** Default: the kind in lower case followed by `s`. */
  plural?: string;
  /** Default: the kind in lower case. */
  singular?: string;
  shortNames?: string[];
  /** Besides `stencil`, which is always one. */
  categories?: string[];
  printerColumns?: ApiPrinterColumn[];
  /** The generated edit and view ClusterRoles aggregate to the standard edit, admin and view. */
  aggregateToDefaultRoles?: boolean;
}

/**
 * An object in the Template's own namespace that instances elsewhere may read through valueFrom
 * (ADR 0019): a kind and exactly one of `name` or `selector`.
 */
export interface SourceEntry {
  /** Default `v1`. */
  apiVersion?: string;
  kind: string;
  name?: string;
  selector?: LabelSelector;
}

export interface TargetNamespaces {
  explicit?: { allow?: { literal?: string[] } };
  selector?: LabelSelector;
}

export interface SyncSpec {
  mode?: SyncMode;
  ignoreFields?: string[];
}

export interface RolloutStage {
  name: string;
  namespaceSelector?: LabelSelector;
  instanceSelector?: LabelSelector;
}

export interface RolloutSpec {
  strategy?: 'All' | 'Progressive';
  /** A count, or a percent (`"25%"`) of the Template's unpinned instances; default 1. */
  maxUnavailable?: number | string;
  pauseOnFailure?: boolean;
  stages?: RolloutStage[];
  /**
   * What a failing preflight does (ADR 0031): Block holds every instance on the stable revision
   * until resumed; Warn (default) says so and rolls on.
   */
  preflight?: PreflightMode;
}

export type PreflightMode = 'Block' | 'Warn';

/** How an instance moves across this revision unchanged (ADR 0012); exactly one is set. */
export interface Migration {
  /** A parameter's old name still supplies its value. */
  renameParameter?: { from: string; to: string };
  /**
   * The object rendered as `to` keeps the name `from` for instances that already own it (names
   * may use {{instance.name}} and {{instance.namespace}}).
   */
  renameObject?: { apiVersion: string; kind: string; from: string; to: string };
  /**
   * A literal the instance gives for `parameter` becomes the defaultValue of a read from this
   * key (names may use {{instance.name}}): the value moves to a source without an edit.
   */
  valueFrom?: {
    parameter: string;
    secretKeyRef?: { name: string; key: string };
    configMapKeyRef?: { name: string; key: string };
  };
}

export interface TemplateSpec {
  /** Release settings (ADR 0012): not part of a revision's content. */
  revisionHistoryLimit?: number;
  /** A release setting too: the kind published for the instances (ADR 0032). */
  api?: ApiSpec;
  rollout?: RolloutSpec;
  /** Longest lifetime an instance may ask for (spec.ttl / stencil.dev/expires-at), e.g. `7d`. */
  maxTTL?: string;
  /** Instances must ask for a lifetime. */
  requireTTL?: boolean;
  /** Part of the revision made from this spec. */
  migrations?: Migration[];
  parameters?: ParameterDeclaration[];
  targetNamespaces?: TargetNamespaces;
  sync?: SyncSpec;
  sourceNamespaces?: string[];
  /** The allow-list for reads from the Template's own namespace (ADR 0019). */
  sources?: SourceEntry[];
  allowCrossNamespaceResources?: boolean;
  allowClusterScopedResources?: boolean;
  /**
   * The ServiceAccount, in the Template's own namespace, that every request the Template causes
   * is made as (ADR 0035): reads, dry runs, applies, prunes. Policy, not content: a pinned
   * revision acts as the live Template's.
   */
  serviceAccountName?: string;
  handlebars: string;
}

export type TemplatePhase = 'Valid' | 'Invalid' | 'Error';

export interface RevisionSummary {
  revision: number;
  hash?: string;
  /** Instances pinned to it (a pin keeps a revision from being pruned). */
  pinned?: number;
}

/** Preflight: the new revision is being checked against every instance; none has moved. */
export type RolloutPhase = 'Preflight' | 'Progressing' | 'Halted' | 'Complete';

/** Progress of `revision` towards the unpinned instances (ADR 0012). */
export interface RolloutStatus {
  revision: number;
  /** Where instances not admitted yet stay. */
  stableRevision: number;
  /** Index of the current stage; stages.length is the implicit last stage. */
  stage: number;
  stageName?: string;
  /** How many instances of the current stage, in creation order, are on `revision`. */
  admitted: number;
  phase: RolloutPhase;
  updated?: number;
  total?: number;
  failing?: string[];
  /** Resumed after a halt: failures no longer halt it or hold a slot. */
  resumed?: boolean;
  /** Halted by a failing preflight under preflight Block: nothing moved (ADR 0031). */
  blockedByPreflight?: boolean;
  message?: string;
}

/** An instance the preflight found failing, and why (redacted like its own status). */
export interface PreflightFailure {
  /** `namespace/name`. */
  instance: string;
  reason: string;
}

/** What rendering and dry-running every instance against `revision` found (ADR 0031). */
export interface PreflightStatus {
  revision: number;
  /** Running until every instance was checked; then Passed, or Failed when any would fail. */
  phase: 'Running' | 'Passed' | 'Failed';
  /** Instances to check: the Template's unpinned instances when the preflight began. */
  total: number;
  /** Would apply something different. */
  changed: number;
  /** Render exactly what they have. */
  unchanged: number;
  /** Would be refused: the render, the schema check, the adoption check or the dry run. */
  failed: number;
  /** The first failing instances (at most 10), in name order. */
  failing?: PreflightFailure[];
}

export interface TemplateStatus {
  observedGeneration?: number;
  phase?: TemplatePhase;
  conditions?: Condition[];
  latestRevision?: number;
  revisions?: RevisionSummary[];
  rollout?: RolloutStatus;
  preflight?: PreflightStatus;
}

/** One immutable release of a Template's content (ADR 0012). */
export interface TemplateRevision {
  apiVersion: string;
  kind: 'TemplateRevision';
  metadata: ObjectMeta;
  spec: {
    template: string;
    revision: number;
    hash: string;
    content: TemplateSpec;
  };
}

export interface Template {
  apiVersion: string;
  kind: 'Template';
  metadata: ObjectMeta;
  spec: TemplateSpec;
  status?: TemplateStatus;
}
