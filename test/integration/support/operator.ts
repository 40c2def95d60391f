// Runs the operator in-process against the test control plane, scoped to a test file's
// namespaces, with its logs captured (so tests can check what it said, and what it never said).
import { Writable } from 'node:stream';
import { inject } from 'vitest';
import { connect, type KubeConnection } from '../../../src/kube/connection.ts';
import { KubeCluster } from '../../../src/kube/cluster.ts';
import { createLogger } from '../../../src/log.ts';
import {
  StencilOperator,
  type OperatorOptions,
  type WebhookOptions,
} from '../../../src/operator/stencil-operator.ts';
import { isClusterError } from '../../../src/reconcile/cluster-port.ts';
import { grantTemplateAccount, TEMPLATE_ACCOUNT } from '../../../tools/local/operator-identity.ts';
import {
  WEBHOOK_CONFIGURATION_NAME,
  webhookConfiguration,
} from '../../../src/webhook/webhook-configuration.ts';

export interface RunningOperator {
  operator: StencilOperator;
  connection: KubeConnection;
  logs: string[];
  stop(): Promise<void>;
}

/**
 * What the Templates of a test file's namespaces may do, as their admins would grant it:
 * `namespaces` (default) anything inside the file's namespaces; `cluster` anything anywhere (for
 * files whose Templates render cluster-scoped objects); `none` nothing (the file grants its own).
 */
export type TemplateAccess = 'namespaces' | 'cluster' | 'none';

/**
 * Gives the default ServiceAccount (TEMPLATE_ACCOUNT) of each namespace the access asked for:
 * the operator acts as it for every Template that names none, as a real install does (ADR 0035).
 */
export async function grantTemplateAccess(
  namespaces: string[],
  access: TemplateAccess,
  kubeconfig = inject('kubeconfig'),
): Promise<void> {
  if (access === 'none' || namespaces.length === 0) return;
  const admin = await connect(kubeconfig);
  try {
    for (const namespace of namespaces)
      await grantTemplateAccount(admin.cluster, namespace, namespaces);
    if (access === 'cluster')
      for (const namespace of namespaces)
        await admin.cluster.apply({
          apiVersion: `${RBAC}/v1`,
          kind: 'ClusterRoleBinding',
          metadata: { name: `${TEMPLATE_ACCOUNT}-of-${namespace}` },
          roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [{ kind: 'ServiceAccount', name: TEMPLATE_ACCOUNT, namespace }],
        });
  } finally {
    admin.http.close();
  }
}

const RBAC = 'rbac.authorization.k8s.io';

/**
 * Starts the operator for `namespaces`. Unless `extra.tenancy` says otherwise it runs as a real
 * install does: each Template acts as the ServiceAccount TEMPLATE_ACCOUNT of its namespace, which
 * `templateAccess` grants (`kubeconfig` must then be an admin's).
 */
export async function startOperator(
  namespaces: string[],
  kubeconfig = inject('kubeconfig'),
  extra: Partial<OperatorOptions> & { templateAccess?: TemplateAccess } = {},
): Promise<RunningOperator> {
  const { templateAccess = 'namespaces', ...options } = extra;
  // With its own plane a file passes that plane's admin kubeconfig; an operator for every
  // namespace ([]) leaves the grants to the file, which creates its namespaces as it goes.
  if (!options.tenancy) await grantTemplateAccess(namespaces, templateAccess, kubeconfig);
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      logs.push(chunk.toString());
      callback();
    },
  });
  const connection = await connect(kubeconfig);
  const operator = new StencilOperator({
    connection,
    namespaces,
    concurrency: 4,
    resyncSeconds: 3600,
    log: createLogger({ level: 'debug', format: 'json', destination }),
    tenancy: { actAs: 'service-account', defaultServiceAccount: TEMPLATE_ACCOUNT },
    ...options,
  });
  await operator.start();
  return {
    operator,
    connection,
    logs,
    stop: async () => {
      await operator.stop(5_000);
      connection.http.close();
    },
  };
}

/** A user's client (`tester`, not the operator): server-side apply as field manager `kubectl-test`. */
export async function userClient(
  kubeconfig = inject('userKubeconfig'),
): Promise<{ cluster: KubeCluster; connection: KubeConnection }> {
  const connection = await connect(kubeconfig);
  return { cluster: new KubeCluster(connection.http, 'test-user', 'kubectl-test'), connection };
}

/** Polls `probe` until it returns a truthy value; fails with the last value seen. */
export async function eventually<T>(
  probe: () => Promise<T | undefined | false | null>,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      last = await probe();
      if (last) return last as T;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}; last: ${JSON.stringify(last, null, 1)?.slice(0, 2000)}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The strict-mode webhook on a free loopback port, reached by URL (there are no Services here),
 * under a configuration name of the test file's own.
 */
export function loopbackWebhook(
  namespace: string,
  configurationName: string,
  extra: Partial<WebhookOptions> = {},
): WebhookOptions {
  return {
    endpoint: { url: 'https://127.0.0.1:0/validate-strict' },
    port: 0,
    host: '127.0.0.1',
    namespace,
    configurationName,
    ...extra,
  };
}

/**
 * The install's part under `--webhook-configurations=install` (ADR 0023), for an operator that
 * runs `webhook` (configurations 'install'): the strict configuration as the chart writes it, no
 * caBundle, named `name` and reaching the operator's loopback port; then one refresh of the
 * operator, which sets the caBundle, so the webhook answers before this returns.
 */
export async function installStrictConfiguration(
  admin: KubeCluster,
  running: RunningOperator,
  name: string,
): Promise<void> {
  const webhook = running.operator.webhook!;
  const url = `https://127.0.0.1:${webhook.port}/validate-strict`;
  await admin.apply(webhookConfiguration({ url }, undefined, name));
  await webhook.refresh();
}

/** RBAC objects naming the configuration `stencil-strict` (resourceNames), renamed to `name`. */
export function renameStrictConfiguration<T>(objects: T[], name: string): T[] {
  const quoted = JSON.stringify(WEBHOOK_CONFIGURATION_NAME);
  return objects.map(
    (o) => JSON.parse(JSON.stringify(o).replaceAll(quoted, JSON.stringify(name))) as T,
  );
}

/**
 * Deletes a test's ValidatingWebhookConfiguration: call it before the operator (and so the
 * webhook server) stops, so later test files never call a dead endpoint.
 */
export async function removeWebhookConfiguration(
  cluster: KubeCluster,
  name: string,
): Promise<void> {
  await cluster.delete({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    name,
  });
}

/** The API server's message when `action` is refused, undefined when it succeeds. */
export async function rejectionOf(action: Promise<unknown>): Promise<string | undefined> {
  try {
    await action;
    return undefined;
  } catch (error) {
    if (isClusterError(error)) return error.message;
    throw error;
  }
}
