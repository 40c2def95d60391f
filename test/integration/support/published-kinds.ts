// Removes what a test file's Templates published (ADR 0032) once its operator has stopped: the
// objects of each kind (their finalizers dropped, since no operator is left to release them), its
// CRD and its two ClusterRoles. Published kinds may share no name across groups, so a kind one
// file left behind would refuse another file's kind of the same name (APIShadowsResource).
import type { KubeObject } from '../../../src/api/object-meta.ts';
import { LABEL_MANAGED_BY, MANAGED_BY_STENCIL } from '../../../src/api/well-known.ts';
import { publisherOfCrd } from '../../../src/engine/typed-api/api-names.ts';
import { roleName } from '../../../src/engine/typed-api/api-roles.ts';
import type { KubeCluster } from '../../../src/kube/cluster.ts';
import { eventually } from './operator.ts';

const CRD = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' } as const;

interface CrdSpec {
  group: string;
  names: { kind: string };
  versions: { name: string; storage?: boolean }[];
}

/** Removes every kind a Template in one of `namespaces` published, and waits until it is gone. */
export async function removePublishedKinds(
  admin: KubeCluster,
  namespaces: readonly string[],
): Promise<void> {
  const crds = await admin.list(CRD.apiVersion, CRD.kind, {
    labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY_STENCIL}`,
  });
  for (const crd of crds) {
    const publisher = publisherOfCrd(crd);
    if (!publisher || !namespaces.includes(publisher.namespace)) continue;
    const spec = crd.spec as CrdSpec;
    const version = spec.versions.find((v) => v.storage)?.name ?? spec.versions[0]?.name;
    const kind = { apiVersion: `${spec.group}/${version ?? ''}`, kind: spec.names.kind };
    const objects = await admin.list(kind.apiVersion, kind.kind).catch(() => [] as KubeObject[]);
    for (const object of objects) {
      const typed = { ...object, ...kind };
      if (object.metadata.finalizers?.length)
        await admin.setFinalizers(typed, []).catch(() => undefined);
      await admin
        .delete({ ...kind, namespace: object.metadata.namespace, name: object.metadata.name ?? '' })
        .catch(() => undefined);
    }
    const name = crd.metadata.name ?? '';
    for (const role of ['edit', 'view'] as const)
      await admin
        .delete({
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          name: roleName(name, role),
        })
        .catch(() => undefined);
    await admin.delete({ ...CRD, name });
    await eventually(async () => !(await admin.get({ ...CRD, name })), `CRD ${name} gone`);
  }
}
