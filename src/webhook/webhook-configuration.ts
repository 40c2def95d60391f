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

/** What both webhooks share: their kind of configuration, fail closed, reached at `path`. */
function configuration(
  kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration',
  name: string,
  target: { endpoint: WebhookEndpoint; caBundle: string; path: string },
  webhook: Record<string, unknown>,
): KubeObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind,
    metadata: { name, labels: { 'app.kubernetes.io/managed-by': 'stencil' } },
    webhooks: [
      {
        ...webhook,
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        matchPolicy: 'Equivalent',
        timeoutSeconds: 5,
        clientConfig: clientConfig(target.endpoint, target.caBundle, target.path),
      },
    ],
  };
}

export function webhookConfiguration(
  endpoint: WebhookEndpoint,
  caBundle: string,
  name = WEBHOOK_CONFIGURATION_NAME,
): KubeObject {
  return configuration(
    'ValidatingWebhookConfiguration',
    name,
    { endpoint, caBundle, path: WEBHOOK_PATH },
    {
      name: 'strict.stencil.dev',
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
    },
  );
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
  const inNamespaces = namespaces && {
    namespaceSelector: {
      matchExpressions: [
        { key: 'kubernetes.io/metadata.name', operator: 'In', values: [...namespaces] },
      ],
    },
  };
  return configuration(
    'MutatingWebhookConfiguration',
    name,
    { endpoint, caBundle, path: REQUESTER_PATH },
    {
      name: 'requester.stencil.dev',
      reinvocationPolicy: 'Never',
      ...inNamespaces,
      rules: [
        {
          operations: ['CREATE', 'UPDATE'],
          apiGroups: [GROUP],
          apiVersions: ['*'],
          resources: [TEMPLATE_INSTANCE_PLURAL, TEMPLATE_INSTANCE_SET_PLURAL],
          scope: '*',
        },
      ],
    },
  );
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
