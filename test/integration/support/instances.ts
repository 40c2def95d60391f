// Builders and readers of TemplateInstances for integration tests: one instance object, its
// status as the API server has it now, and one of its conditions.
import type { Condition } from '../../../src/api/condition.ts';
import type { KubeObject } from '../../../src/api/object-meta.ts';
import type { TemplateInstanceStatus } from '../../../src/api/template-instance.ts';
import { API_VERSION } from '../../../src/api/well-known.ts';
import type { KubeCluster } from '../../../src/kube/cluster.ts';

/** A TemplateInstance of the Template `templateName` in its own namespace. */
export function instanceObject(
  namespace: string,
  name: string,
  templateName: string,
  parameters: unknown[] = [],
): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: 'TemplateInstance',
    metadata: { name, namespace },
    spec: { templateRef: { name: templateName }, parameters },
  };
}

export async function instanceStatus(
  user: KubeCluster,
  namespace: string,
  name: string,
): Promise<TemplateInstanceStatus | undefined> {
  const object = await user.get({
    apiVersion: API_VERSION,
    kind: 'TemplateInstance',
    name,
    namespace,
  });
  return (object as { status?: TemplateInstanceStatus } | undefined)?.status;
}

export function conditionOf(
  status: { conditions?: Condition[] } | undefined,
  type = 'Ready',
): Condition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}
