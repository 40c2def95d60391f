// Whether what Stencil keeps for a published kind (ADR 0032) is still as Stencil generated it,
// and what puts it back. A CRD or ClusterRole edited by hand must not keep a field Stencil did not
// write: `x-kubernetes-preserve-unknown-fields` added to a schema would let the API server admit
// fields the kind does not have, an `aggregationRule` would hand the role's rules to a controller.
// Server-side apply with force takes back every field Stencil applies, and replaces the atomic
// lists (a CRD's `spec.versions`, a role's `rules`) whole, but it keeps a field only another
// manager set (a CRD's `spec.names.shortNames`, a role's `aggregationRule` or labels). Pure.
import type { KubeObject } from '../../api/object-meta.ts';
import { mergePatchReplacing } from '../shared/json-map.ts';
import { firstDifference } from '../sync/drift.ts';
import type { CustomResourceDefinition } from './api-crd.ts';
import type { ClusterRole } from './api-roles.ts';

/** What the API server fills in a CRD's spec that the generated one leaves out. */
const CRD_SPEC_DEFAULTS = { conversion: { strategy: 'None' } };

/** The generated CRD's spec as the API server stores it (its defaults filled in). */
function servedSpec(desired: CustomResourceDefinition): Record<string, unknown> {
  return { ...CRD_SPEC_DEFAULTS, ...desired.spec };
}

/**
 * The first field of the live CRD's spec that is not as generated (added, changed or removed),
 * e.g. `spec.versions[0].schema.openAPIV3Schema.x-kubernetes-preserve-unknown-fields`; undefined
 * when the spec is exactly the generated one.
 */
export function crdDrift(desired: CustomResourceDefinition, live: KubeObject): string | undefined {
  return firstDifference(live.spec, servedSpec(desired), 'spec');
}

/**
 * The merge patch of `spec` that makes the live CRD's spec exactly the generated one: what
 * another manager added is set to null (lists are replaced whole), the rest is what Stencil
 * applies anyway.
 */
export function crdRepair(
  desired: CustomResourceDefinition,
  live: KubeObject,
): Record<string, unknown> {
  const spec = (live.spec ?? {}) as Record<string, unknown>;
  return mergePatchReplacing(spec, servedSpec(desired));
}

const AGGREGATE_TO = 'rbac.authorization.k8s.io/aggregate-to-';

export interface RoleDrift {
  /** What is not as generated, for a message: `rules`, `aggregationRule`, `label ...`. */
  fields: string[];
  /**
   * A field outside `rules` and metadata (an `aggregationRule`): server-side apply cannot take
   * it away from the manager that set it, so the role is replaced.
   */
  replace: boolean;
  /** Aggregation labels the Template did not ask for, to remove. */
  strayLabels: string[];
}

/**
 * How a generated ClusterRole differs from the live one: its rules exactly, no field beyond
 * them, and exactly the aggregation labels the Template asks for (which decide who else holds
 * the role's rights). Other labels and annotations are anyone's.
 */
export function roleDrift(desired: ClusterRole, live: KubeObject): RoleDrift {
  const fields: string[] = [];
  const rules = firstDifference(live.rules ?? [], desired.rules, 'rules');
  if (rules) fields.push(rules);
  const extra = Object.keys(live).filter(
    (key) => !['apiVersion', 'kind', 'metadata', 'rules'].includes(key),
  );
  fields.push(...extra);
  const wanted = desired.metadata.labels;
  const labels = live.metadata.labels ?? {};
  const strayLabels = Object.keys(labels).filter(
    (key) => key.startsWith(AGGREGATE_TO) && wanted[key] !== labels[key],
  );
  fields.push(...strayLabels.map((key) => `label ${key}`));
  return { fields, replace: extra.length > 0, strayLabels };
}

interface ManagedFieldsEntry {
  manager?: string;
  fieldsV1?: Record<string, unknown>;
}

/**
 * Whether a manager other than `fieldManager` wrote the live CRD's `spec.versions` last (the
 * list is atomic: whoever changes any part of a version's schema takes all of it). Such a schema
 * is not one a Template published, so it is no baseline for the compatibility check.
 */
export function schemaWrittenByOthers(live: KubeObject, fieldManager: string): boolean {
  const entries = (live.metadata as { managedFields?: ManagedFieldsEntry[] }).managedFields ?? [];
  return entries.some((entry) => {
    const spec = entry.fieldsV1?.['f:spec'] as Record<string, unknown> | undefined;
    return spec?.['f:versions'] !== undefined && entry.manager !== fieldManager;
  });
}
