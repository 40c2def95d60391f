// Where rendered resources land (SPEC §5): namespace defaulting, and the refusals of
// cross-namespace and cluster-scoped resources unless the Template opted in. Which kinds are
// namespaced comes from API discovery in the operator, or from the built-in table offline.
import { InstanceReason } from '../../api/condition.ts';
import type { KubeObject } from '../../api/object-meta.ts';
import type { TemplateSpec } from '../../api/template.ts';
import { failure, success, type Outcome } from '../shared/problem.ts';

/** Whether a kind's objects live in a namespace or in the cluster as a whole. */
export type KindScope = 'Namespaced' | 'Cluster';

/** `group/Kind` of common cluster-scoped kinds (core group is empty). */
const CLUSTER_SCOPED = new Set([
  '/Namespace',
  '/Node',
  '/PersistentVolume',
  '/ComponentStatus',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'apiregistration.k8s.io/APIService',
  'storage.k8s.io/StorageClass',
  'storage.k8s.io/CSIDriver',
  'storage.k8s.io/CSINode',
  'storage.k8s.io/VolumeAttachment',
  'scheduling.k8s.io/PriorityClass',
  'node.k8s.io/RuntimeClass',
  'networking.k8s.io/IngressClass',
  'networking.k8s.io/IPAddress',
  'networking.k8s.io/ServiceCIDR',
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
  'admissionregistration.k8s.io/MutatingAdmissionPolicy',
  'admissionregistration.k8s.io/MutatingAdmissionPolicyBinding',
  'certificates.k8s.io/CertificateSigningRequest',
  'certificates.k8s.io/ClusterTrustBundle',
  'flowcontrol.apiserver.k8s.io/FlowSchema',
  'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration',
  'resource.k8s.io/DeviceClass',
]);

export function groupOf(apiVersion: string): string {
  return groupVersionOf(apiVersion).group;
}

/** `apps/v1` → apps and v1; `v1` (the core group) → '' and v1. */
export function groupVersionOf(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/**
 * Offline scope of a kind: the built-in table, else `Namespaced` (most custom resources are).
 * Callers that know better (discovery, a CRD among --objects) override it.
 */
export function builtinScope(apiVersion: string, kind: string): KindScope {
  return CLUSTER_SCOPED.has(`${groupOf(apiVersion)}/${kind}`) ? 'Cluster' : 'Namespaced';
}

export type ScopeLookup = (apiVersion: string, kind: string) => KindScope | undefined;

interface CrdShape {
  apiVersion?: string;
  kind?: string;
  spec?: { group?: unknown; scope?: unknown; names?: { kind?: unknown } };
}

/** `group/Kind` of a kind, the key of {@link kindsDeclaredBy}. */
export function groupKind(apiVersion: string, kind: string): string {
  return `${groupOf(apiVersion)}/${kind}`;
}

/**
 * The kinds that CustomResourceDefinitions among `objects` declare, with their scope: a render
 * that installs a CRD may also render resources of it (they are applied once it is served),
 * and `stencil render --objects` learns custom kinds the same way.
 */
export function kindsDeclaredBy(objects: readonly unknown[]): Map<string, KindScope> {
  const kinds = new Map<string, KindScope>();
  for (const object of objects as CrdShape[]) {
    if (
      object.kind !== 'CustomResourceDefinition' ||
      groupOf(object.apiVersion ?? '') !== 'apiextensions.k8s.io'
    )
      continue;
    const { group, scope, names } = object.spec ?? {};
    if (typeof group !== 'string' || typeof names?.kind !== 'string') continue;
    kinds.set(`${group}/${names.kind}`, scope === 'Cluster' ? 'Cluster' : 'Namespaced');
  }
  return kinds;
}

export interface Placement {
  instanceNamespace: string;
  spec: Pick<TemplateSpec, 'allowCrossNamespaceResources' | 'allowClusterScopedResources'>;
  scopeOf: ScopeLookup;
}

function refuse(
  index: number,
  object: KubeObject,
  message: string,
  transient?: true,
): Outcome<KubeObject[]> {
  return failure([
    {
      path: `document ${index + 1}`,
      reason: InstanceReason.TemplateExecutionFailed,
      message: `${object.kind} "${object.metadata.name ?? ''}" ${message}`,
      ...(transient ? { transient } : {}),
    },
  ]);
}

/**
 * Puts every namespaced object in the instance's namespace unless it names one, and refuses
 * objects outside it (or cluster-scoped ones) unless the Template allows them. Returns copies.
 */
export function placeResources(objects: KubeObject[], placement: Placement): Outcome<KubeObject[]> {
  const placed: KubeObject[] = [];
  const seen = new Set<string>();
  for (const [index, object] of objects.entries()) {
    const scope = placement.scopeOf(object.apiVersion, object.kind);
    if (scope === undefined) {
      return refuse(
        index,
        object,
        `has kind ${object.kind} (${object.apiVersion}), which the API server does not serve`,
        true, // its CRD may be (re)installed: retry rather than wait for an edit
      );
    }
    const metadata = { ...object.metadata };
    if (scope === 'Cluster') {
      if (!placement.spec.allowClusterScopedResources) {
        return refuse(
          index,
          object,
          'is cluster-scoped; the Template must set spec.allowClusterScopedResources: true',
        );
      }
      delete metadata.namespace;
    } else {
      metadata.namespace ??= placement.instanceNamespace;
      if (
        metadata.namespace !== placement.instanceNamespace &&
        !placement.spec.allowCrossNamespaceResources
      ) {
        return refuse(
          index,
          object,
          `is in namespace "${metadata.namespace}", outside the instance's namespace "${placement.instanceNamespace}"; the Template must set spec.allowCrossNamespaceResources: true`,
        );
      }
    }
    const identity = `${groupOf(object.apiVersion)}/${object.kind}/${metadata.namespace ?? ''}/${metadata.name ?? ''}`;
    if (seen.has(identity))
      return refuse(index, object, 'is rendered twice (same kind, namespace and name)');
    seen.add(identity);
    placed.push({ ...object, metadata });
  }
  return success(placed);
}
