// The webhook configurations: the install (chart, config/deploy) owns them and the operator keeps
// only their caBundle current (ADR 0023); the playground and the tests let the operator create them.
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
export const STRICT_WEBHOOK_NAME = 'strict.stencil.dev';
export const REQUESTER_WEBHOOK_NAME = 'requester.stencil.dev';

/**
 * Who may delete a strict object without asking the webhook: the namespace controller and the
 * garbage collector, under their per-controller service accounts or a controller manager's own
 * identity. Both delete only what a user already asked to delete (the namespace, the owner), and
 * must not wait on the operator: while it is down a failing webhook would block them for good.
 */
export const SYSTEM_DELETERS = [
  'system:serviceaccount:kube-system:namespace-controller',
  'system:serviceaccount:kube-system:generic-garbage-collector',
  'system:kube-controller-manager',
] as const;

/** The CEL matchCondition that keeps SYSTEM_DELETERS' deletes away from the strict webhook. */
export const SYSTEM_DELETES_EXEMPT = {
  name: 'not-a-system-delete',
  expression: `!(request.operation == 'DELETE' && request.userInfo.username in [${SYSTEM_DELETERS.map((u) => `'${u}'`).join(', ')}])`,
};

/** Field manager of the caBundle-only apply, never used for anything else (ADR 0023). */
export const CA_BUNDLE_FIELD_MANAGER = 'stencil-ca-bundle';

export type WebhookEndpoint =
  { url: string } | { service: { namespace: string; name: string; port: number } };

/**
 * How the API server calls `path` of the endpoint (a URL endpoint's own path is replaced). No
 * `caBundle` (undefined) is how an install writes it: the operator sets it later (ADR 0023).
 */
function clientConfig(
  endpoint: WebhookEndpoint,
  caBundle: string | undefined,
  path: string,
): object {
  const ca = caBundle === undefined ? {} : { caBundle: Buffer.from(caBundle).toString('base64') };
  if ('service' in endpoint) return { service: { ...endpoint.service, path }, ...ca };
  const url = new URL(endpoint.url);
  url.pathname = path;
  return { url: url.toString(), ...ca };
}

/** What both webhooks share: their kind of configuration, fail closed, reached at `path`. */
function configuration(
  kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration',
  name: string,
  target: { endpoint: WebhookEndpoint; caBundle: string | undefined; path: string },
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
  caBundle: string | undefined,
  name = WEBHOOK_CONFIGURATION_NAME,
): KubeObject {
  return configuration(
    'ValidatingWebhookConfiguration',
    name,
    { endpoint, caBundle, path: WEBHOOK_PATH },
    {
      name: STRICT_WEBHOOK_NAME,
      objectSelector: { matchLabels: { [LABEL_SYNC_MODE]: 'strict' } },
      matchConditions: [SYSTEM_DELETES_EXEMPT],
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
  caBundle: string | undefined,
  name = REQUESTER_CONFIGURATION_NAME,
  namespaces?: readonly string[],
  /** The groups Templates may publish kinds in (ADR 0032): their objects are instances too. */
  typedGroups: readonly string[] = [],
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
      name: REQUESTER_WEBHOOK_NAME,
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
        // Every kind of the allowed groups: a resource, not its subresources (status writes).
        ...(typedGroups.length > 0
          ? [
              {
                operations: ['CREATE', 'UPDATE'],
                apiGroups: [...typedGroups].sort(),
                apiVersions: ['*'],
                resources: ['*'],
                scope: 'Namespaced',
              },
            ]
          : []),
      ],
    },
  );
}

/**
 * The apply that sets only one webhook's caBundle in a configuration the install owns: sent under
 * CA_BUNDLE_FIELD_MANAGER, it neither owns nor removes anything else, and when the configuration
 * is missing (uninstalled) it fails instead of creating one.
 */
export function caBundleApply(
  kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration',
  name: string,
  webhook: string,
  caBundle: string,
): KubeObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind,
    metadata: { name },
    webhooks: [
      { name: webhook, clientConfig: { caBundle: Buffer.from(caBundle).toString('base64') } },
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
