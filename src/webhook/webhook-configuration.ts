// The ValidatingWebhookConfiguration the operator keeps in place for strict mode: it selects only
// objects labelled `stencil.dev/sync-mode: strict`, so resources of off/revert Templates never
// pass through it and an operator outage cannot block them.
import type { KubeObject } from '../api/object-meta.ts';
import { LABEL_SYNC_MODE } from '../api/well-known.ts';

export const WEBHOOK_CONFIGURATION_NAME = 'stencil-strict';
export const WEBHOOK_PATH = '/validate-strict';

export type WebhookEndpoint =
  { url: string } | { service: { namespace: string; name: string; port: number } };

export function webhookConfiguration(
  endpoint: WebhookEndpoint,
  caBundle: string,
  name = WEBHOOK_CONFIGURATION_NAME,
): KubeObject {
  const clientConfig =
    'url' in endpoint
      ? { url: endpoint.url, caBundle: Buffer.from(caBundle).toString('base64') }
      : {
          service: { ...endpoint.service, path: WEBHOOK_PATH },
          caBundle: Buffer.from(caBundle).toString('base64'),
        };
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name, labels: { 'app.kubernetes.io/managed-by': 'stencil' } },
    webhooks: [
      {
        name: 'strict.stencil.dev',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        matchPolicy: 'Equivalent',
        timeoutSeconds: 5,
        objectSelector: { matchLabels: { [LABEL_SYNC_MODE]: 'strict' } },
        rules: [
          {
            operations: ['UPDATE', 'DELETE'],
            apiGroups: ['*'],
            apiVersions: ['*'],
            resources: ['*'],
            scope: '*',
          },
        ],
        clientConfig,
      },
    ],
  };
}

/** Hosts the serving certificate must cover for an endpoint. */
export function endpointHosts(endpoint: WebhookEndpoint): string[] {
  if ('url' in endpoint) return [new URL(endpoint.url).hostname];
  const { name, namespace } = endpoint.service;
  return [
    `${name}.${namespace}.svc`,
    `${name}.${namespace}.svc.cluster.local`,
    `${name}.${namespace}`,
    name,
  ];
}
