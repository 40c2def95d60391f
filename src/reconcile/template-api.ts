// A Template's published kind (ADR 0032), the part that needs the cluster: the checks against the
// CRDs that exist (a CRD of that name that is not this Template's, a change that would break the
// kind's instances) and the resources the cluster serves (a name kubectl would resolve to the new
// kind instead), then the CRD and its roles applied, or deleted once the Template no longer
// publishes the kind and none of its instances is left. Each is written only when it is not
// exactly as generated: a hand edit is put back, a field another manager added removed.
import { TemplateConditionType, TemplateReason } from '../api/condition.ts';
import type { KubeObject } from '../api/object-meta.ts';
import type { Template } from '../api/template.ts';
import { ANNOTATION_ALLOW_BREAKING_API_CHANGES, FIELD_MANAGER } from '../api/well-known.ts';
import { draft, type ConditionDraft } from '../engine/shared/conditions.ts';
import type { Problem } from '../engine/shared/problem.ts';
import { apiChanges } from '../engine/typed-api/api-compatibility.ts';
import type { CustomResourceDefinition } from '../engine/typed-api/api-crd.ts';
import {
  crdDrift,
  crdRepair,
  roleDrift,
  schemaWrittenByOthers,
} from '../engine/typed-api/api-drift.ts';
import { apiNames, isPublishedBy, publisherOfCrd } from '../engine/typed-api/api-names.ts';
import { publishedRoles, roleName, type ClusterRole } from '../engine/typed-api/api-roles.ts';
import { shadowing, type ServedResource } from '../engine/typed-api/api-shadowing.ts';
import { carriesAppliedHash, withAppliedHash } from './instance/applier.ts';
import { isClusterError, type ClusterPort } from './cluster-port.ts';

const CRD = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' } as const;
const CLUSTER_ROLE = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' } as const;

/** A kind the Template publishes now, as the operator watches it. */
export interface PublishedNow {
  /** Its CRD's name. */
  crdName: string;
  /** How many instances of it exist. */
  instances: number;
}

/** What the cluster says of a Template's kind: refusals (Valid=False), or what to apply. */
export interface ApiCheck {
  problems: Problem[];
  /** The CRD to apply when the Template is valid. */
  crd?: CustomResourceDefinition;
  /** The CRD of that name as the cluster has it, if any. */
  existing?: KubeObject;
  /** Published kinds to delete once the new one is applied (a kind renamed with no instance). */
  retired: string[];
  /**
   * Names the kind already served when a resource installed since took them too: said in the
   * APIPublished condition, not refused.
   */
  notes?: string[];
}

/**
 * Checks `spec.api` against the cluster: the CRD of its name must be this Template's or absent;
 * no name of the kind may be one a resource the cluster serves answers to (`served`, from
 * discovery; the Template's own CRDs aside); a change of the CRD must not break the kind's
 * instances (unless the Template's annotation allows it); a kind renamed while it has instances
 * is refused.
 */
export async function checkApiOnCluster(
  cluster: Pick<ClusterPort, 'get'>,
  template: Template,
  crd: CustomResourceDefinition,
  publishedNow: readonly PublishedNow[],
  served: readonly ServedResource[] = [],
): Promise<ApiCheck> {
  const existing = (await cluster.get({ ...CRD, name: crd.metadata.name })) as
    (KubeObject & CustomResourceDefinition) | undefined;
  const instances = publishedNow.reduce((n, p) => n + p.instances, 0);
  const retired = publishedNow.map((p) => p.crdName).filter((n) => n !== crd.metadata.name);
  const ours = existing && isPublishedBy(existing, template) ? existing : undefined;
  const shadowed = shadowing(template.spec.api!, served, {
    own: new Set([crd.metadata.name, ...publishedNow.map((p) => p.crdName)]),
    kept: servedNames(ours),
  });
  const problems = [
    ...conflicts(template, crd, existing),
    ...shadowed.problems,
    ...(retired.length > 0 && instances > 0
      ? [
          refusal(
            TemplateReason.APIChangeRefused,
            `the kind cannot be renamed (${retired.join(', ')} → ${crd.metadata.name}) while ${instances} instance(s) of it exist`,
          ),
        ]
      : []),
  ];
  if (existing && problems.length === 0)
    problems.push(...changeRefusals(template, existing, crd, instances));
  return problems.length > 0
    ? { problems, retired: [] }
    : { problems, crd, existing, retired, notes: shadowed.kept };
}

/** The names (lower case) the API server serves a CRD's kind by, as it accepted them. */
function servedNames(crd: KubeObject | undefined): Set<string> {
  const status = crd?.status as { acceptedNames?: Partial<ServedResource> } | undefined;
  const names = status?.acceptedNames;
  if (!names) return new Set();
  return new Set(
    [names.kind, names.plural, names.singular, ...(names.shortNames ?? [])]
      .filter((n): n is string => !!n)
      .map((n) => n.toLowerCase()),
  );
}

function refusal(reason: string, message: string): Problem {
  return { path: 'spec.api', reason, message };
}

/** A CRD of the kind's name that another Template, or anyone else, keeps. */
function conflicts(
  template: Template,
  crd: CustomResourceDefinition,
  existing: KubeObject | undefined,
): Problem[] {
  if (!existing || isPublishedBy(existing, template)) return [];
  const owner = publisherOfCrd(existing);
  const whose = owner ? `published by Template ${owner.namespace}/${owner.name}` : "not Stencil's";
  return [
    refusal(
      TemplateReason.APIConflict,
      `the CustomResourceDefinition ${crd.metadata.name} exists and is ${whose}`,
    ),
  ];
}

/**
 * A change of the published CRD that its instances cannot take. A schema another manager wrote
 * last (a hand edit) is not one the Template published: what would undo the edit is no breaking
 * change, and is not refused; the identity of the kind is checked all the same.
 */
function changeRefusals(
  template: Template,
  existing: KubeObject & CustomResourceDefinition,
  crd: CustomResourceDefinition,
  instances: number,
): Problem[] {
  const changes = apiChanges(existing, crd);
  const problems: Problem[] = [];
  if (changes.identity.length > 0 && instances > 0)
    problems.push(
      refusal(
        TemplateReason.APIChangeRefused,
        `${changes.identity.join(', ')}: not while ${instances} instance(s) of the kind exist`,
      ),
    );
  const allowed =
    template.metadata.annotations?.[ANNOTATION_ALLOW_BREAKING_API_CHANGES] === 'true' ||
    schemaWrittenByOthers(existing, FIELD_MANAGER);
  if (changes.breaking.length > 0 && !allowed)
    problems.push(
      refusal(
        TemplateReason.APIChangeRefused,
        `the change would break existing ${crd.spec.names.kind}s: ${changes.breaking.join('; ')} ` +
          `(annotate the Template ${ANNOTATION_ALLOW_BREAKING_API_CHANGES}=true to make it anyway)`,
      ),
    );
  return problems;
}

/**
 * Applies the CRD and its roles; returns the APIPublished condition (Established, or not yet:
 * the CRD's own event brings the Template back once it is).
 */
export async function publishApi(
  cluster: Pick<ClusterPort, 'get' | 'apply' | 'delete' | 'patchSpec' | 'patchMetadata'>,
  template: Template,
  check: ApiCheck,
): Promise<ConditionDraft | undefined> {
  if (!check.crd) return undefined;
  const names = apiNames(template.spec.api!);
  let applied: KubeObject;
  try {
    applied = await applyCrd(cluster, check.crd, check.existing);
  } catch (error) {
    const refusal = crdRefusal(error);
    if (refusal === undefined) throw error;
    // The same CRD is refused the same way next time: said in the status, not retried forever.
    return draft(
      TemplateConditionType.APIPublished,
      false,
      TemplateReason.APIInvalid,
      `the API server refused CustomResourceDefinition ${names.crdName}: ${refusal}`.slice(0, 1024),
    );
  }
  for (const role of publishedRoles(template))
    await applyRole(
      cluster,
      role,
      await cluster.get({ ...CLUSTER_ROLE, name: role.metadata.name }),
    );
  for (const name of check.retired) await unpublish(cluster, name);
  const established = (
    applied as { status?: { conditions?: { type: string; status: string }[] } }
  ).status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  const notes = (check.notes ?? []).map((n) => `; ${n}`).join('');
  return established
    ? draft(
        TemplateConditionType.APIPublished,
        true,
        TemplateReason.APIEstablished,
        `${names.kind} (${names.apiVersion}) is served: CustomResourceDefinition ${names.crdName}${notes}`,
      )
    : draft(
        TemplateConditionType.APIPublished,
        false,
        TemplateReason.APIPending,
        `CustomResourceDefinition ${names.crdName} applied; waiting for the API server to serve it`,
      );
}

/**
 * Why the API server refused a CRD for good, or undefined for a failure worth retrying: an
 * invalid object, or one too large to store (etcd's "request is too large" comes back as a 500;
 * a proxy may answer 413).
 */
export function crdRefusal(error: unknown): string | undefined {
  if (!isClusterError(error)) return undefined;
  if (error.kind === 'Invalid' || error.status === 413) return error.message;
  if (/request is too large|too large to store/i.test(error.message)) return error.message;
  return undefined;
}

/**
 * Applies the CRD unless the live one carries the hash of it and its spec is exactly the
 * generated one (ADR 0028: a pass that changes nothing writes nothing). Server-side apply takes
 * back what Stencil applies, the versions with their schemas whole (an atomic list); a field only
 * another manager set (a short name, a conversion) stays, and is removed by a merge patch.
 */
async function applyCrd(
  cluster: Pick<ClusterPort, 'apply' | 'patchSpec'>,
  crd: CustomResourceDefinition,
  live: KubeObject | undefined,
): Promise<KubeObject> {
  const { desired, hash } = withAppliedHash(crd as unknown as KubeObject);
  if (live && carriesAppliedHash(desired, hash, live) && !crdDrift(crd, live)) return live;
  const applied = await cluster.apply(desired);
  return crdDrift(crd, applied) ? cluster.patchSpec(applied, crdRepair(crd, applied)) : applied;
}

/**
 * Applies a ClusterRole unless the live one carries the hash of it and is exactly as generated.
 * Its rules are an atomic list that server-side apply replaces whole; an aggregation label the
 * Template did not ask for is removed; a role with an `aggregationRule` (which server-side apply
 * cannot take from the manager that set it) is deleted, that very version, and created anew.
 */
async function applyRole(
  cluster: Pick<ClusterPort, 'apply' | 'delete' | 'patchMetadata'>,
  role: ClusterRole,
  live: KubeObject | undefined,
): Promise<void> {
  const { desired, hash } = withAppliedHash(role as unknown as KubeObject);
  const drift = live && roleDrift(role, live);
  if (live && drift?.fields.length === 0 && carriesAppliedHash(desired, hash, live)) return;
  if (live && drift?.replace)
    await cluster.delete(
      { ...CLUSTER_ROLE, name: role.metadata.name, uid: live.metadata.uid },
      { resourceVersion: live.metadata.resourceVersion },
    );
  const applied = await cluster.apply(desired);
  const stray = drift && !drift.replace ? drift.strayLabels : [];
  if (stray.length > 0)
    await cluster.patchMetadata(applied, {
      labels: Object.fromEntries(stray.map((key) => [key, null])),
    });
}

/**
 * Deletes the kinds the Template no longer publishes (no `spec.api`, or deleted), once none of
 * their instances is left; the condition says what waits.
 */
export async function unpublishApi(
  cluster: Pick<ClusterPort, 'delete'>,
  publishedNow: readonly PublishedNow[],
): Promise<ConditionDraft | undefined> {
  const waiting = publishedNow.filter((p) => p.instances > 0);
  for (const p of publishedNow) if (p.instances === 0) await unpublish(cluster, p.crdName);
  if (waiting.length === 0) return undefined;
  return draft(
    TemplateConditionType.APIPublished,
    false,
    TemplateReason.APIUnpublishBlocked,
    `${waiting.map((p) => `${p.crdName}: ${p.instances} instance(s)`).join(', ')} left; ` +
      'the kind is removed once they are deleted',
  );
}

/**
 * A deleted Template's kind, when the operator does not watch it (its CRD was applied but never
 * became Established, or the operator restarted before it did): deleted if it is this Template's.
 */
export async function unpublishUnwatched(
  cluster: Pick<ClusterPort, 'get' | 'delete'>,
  template: Template,
  publishedNow: readonly PublishedNow[],
): Promise<void> {
  if (!template.spec.api) return;
  const { crdName } = apiNames(template.spec.api);
  if (publishedNow.some((p) => p.crdName === crdName)) return;
  const existing = await cluster.get({ ...CRD, name: crdName });
  if (existing && isPublishedBy(existing, template)) await unpublish(cluster, crdName);
}

async function unpublish(cluster: Pick<ClusterPort, 'delete'>, crdName: string): Promise<void> {
  for (const role of ['edit', 'view'] as const)
    await cluster.delete({ ...CLUSTER_ROLE, name: roleName(crdName, role) });
  await cluster.delete({ ...CRD, name: crdName });
}
