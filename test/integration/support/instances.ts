// Readers of TemplateInstances for integration tests: an instance's status as the API server has
// it now, one of its conditions, and the Events the operator recorded (the objects themselves
// are built in builders.ts).
import type { Condition } from '../../../src/api/condition.ts';
import type { TemplateInstanceStatus } from '../../../src/api/template-instance.ts';
import { API_VERSION } from '../../../src/api/well-known.ts';
import type { KubeCluster } from '../../../src/kube/cluster.ts';
import { eventually } from './operator.ts';

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

interface EventView {
  reason?: string;
  message?: string;
  involvedObject?: { kind?: string; name?: string };
}

/**
 * Waits for an Event in `namespace` with `reason` (and a message containing `text`): the
 * operator sends Events beside its reconciles, so one may land just after what it reports on.
 */
export async function eventRecorded(
  user: KubeCluster,
  namespace: string,
  reason: string,
  text = '',
): Promise<EventView> {
  return eventually(
    async () => {
      const events = (await user.list('v1', 'Event', { namespace })) as unknown as EventView[];
      return events.find((e) => e.reason === reason && String(e.message).includes(text));
    },
    `an Event ${reason}${text ? ` mentioning "${text}"` : ''} in ${namespace}`,
  );
}
