// The strict-mode admission webhook (SPEC §7) as the operator runs it: its options, and starting
// it under the operator's own identity (which it always admits).
import type { KubeCluster } from '../kube/cluster.ts';
import type { Logger } from '../log.ts';
import { StrictWebhook, type StrictWebhookOptions } from '../webhook/strict-webhook.ts';
import { CA_BUNDLE_FIELD_MANAGER } from '../webhook/webhook-configuration.ts';

/** The strict-mode webhook: where it listens, how the API server reaches it, where its certificate lives. */
export type WebhookOptions = Pick<
  StrictWebhookOptions,
  | 'endpoint'
  | 'port'
  | 'host'
  | 'namespace'
  | 'secretName'
  | 'configurationName'
  | 'certDir'
  | 'configurations'
  | 'breakGlassGroups'
  | 'requester'
  | 'requesterConfigurationName'
  | 'typedGroups'
  | 'namespaces'
  | 'cache'
>;

/**
 * Starts serving the webhook. `mayWrite` tells it whether this replica may write its
 * configuration and certificate (the leader, or the only replica).
 */
export async function startStrictWebhook(
  options: WebhookOptions,
  cluster: KubeCluster,
  log: Logger,
  mayWrite: () => boolean,
): Promise<StrictWebhook> {
  const webhook = new StrictWebhook({
    cluster,
    log: (level, message, fields) => log[level](message, fields),
    mayWrite,
    caBundleWriter: cluster.withFieldManager(CA_BUNDLE_FIELD_MANAGER),
    ...options,
  });
  await webhook.start(await cluster.identity());
  return webhook;
}
