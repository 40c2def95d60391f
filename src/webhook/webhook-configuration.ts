// The webhook configurations the operator keeps in place (unless cert-manager's chart owns them):
// - strict mode's ValidatingWebhookConfiguration selects only objects labelled
//   `stencil.dev/sync-mode: strict`, so resources of off/revert Templates never pass through it
//   and an operator outage cannot block them;
// - under --authorize-sources=requester, a MutatingWebhookConfiguration on TemplateInstances and
//   TemplateInstanceSets records who creates them (ADR 0020).
import type { KubeObject } from '../api/object-meta.ts';
import {
  GROUP,
  LABEL_SYNC_MODE,
  TEMPLATE_INSTANCE_PLURAL,
  TEMPLATE_INSTANCE_SET_PLURAL,
} from '../api/well-known.ts';

export const WEBHOOK_CONFIGURATION_NAME = 'stencil-strict';
export const WEBHOOK_PATH = '/validate-strict';
export const REQUESTER_CONFIGURATION_NAME = 'stencil-requester';
export const REQUESTER_PATH = '/mutate-requester';

export type WebhookEndpoint =
  { url: string } | { service: { namespace: string; name: string; port: number } };

/** How the API server calls `path` of the endpoint (a URL endpoint's own path is replaced). */
function clientConfig(endpoint: WebhookEndpoint, caBundle: string, path: string): object {
  const ca = Buffer.from(caBundle).toString('base64');
  if ('service' in endpoint) return { service: { ...endpoint.service, path }, caBundle: ca };
  const url = new URL(endpoint.url);
  url.pathname = path;
  return { url: url.toString(), caBundle: ca };
}

const COMMON = {
  admissionReviewVersions: ['v1'],
  sideEffects: 'None',
  failurePolicy: 'Fail',
  matchPolicy: 'Equivalent',
  timeoutSeconds: 5,
} as const;

const MANAGED = { 'app.kubernetes.io/managed-by': 'stencil' };

export function webhookConfiguration(
  endpoint: WebhookEndpoint,
  caBundle: string,
  name = WEBHOOK_CONFIGURATION_NAME,
): KubeObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name, labels: MANAGED },
    webhooks: [
      {
        name: 'strict.stencil.dev',
        ...COMMON,
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
        clientConfig: clientConfig(endpoint, caBundle, WEBHOOK_PATH),
      },
    ],
  };
}

/**
 * The requester webhook. `namespaces`: an operator that watches only these sees only their
 * instances, so only their creates pass through it (TemplateInstanceSets, cluster-scoped, always).
 * Fail closed: an instance created while the webhook is down would record nobody.
 */
export function requesterWebhookConfiguration(
  endpoint: WebhookEndpoint,
  caBundle: string,
  name = REQUESTER_CONFIGURATION_NAME,
  namespaces?: readonly string[],
): KubeObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name, labels: MANAGED },
    webhooks: [
      {
        name: 'requester.stencil.dev',
        ...COMMON,
        reinvocationPolicy: 'Never',
        ...(namespaces
          ? {
              namespaceSelector: {
                matchExpressions: [
                  { key: 'kubernetes.io/metadata.name', operator: 'In', values: [...namespaces] },
                ],
              },
            }
          : {}),
        rules: [
          {
            operations: ['CREATE', 'UPDATE'],
            apiGroups: [GROUP],
            apiVersions: ['*'],
            resources: [TEMPLATE_INSTANCE_PLURAL, TEMPLATE_INSTANCE_SET_PLURAL],
            scope: '*',
          },
        ],
        clientConfig: clientConfig(endpoint, caBundle, REQUESTER_PATH),
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
