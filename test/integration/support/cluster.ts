// Test access to the real API server started by global-setup: a KubeConfig, typed clients, and
// a fresh namespace per test file (namespaces never finish deleting without a controller-manager).
import { randomBytes } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { inject } from 'vitest';

export interface TestCluster {
  kubeConfig: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  custom: k8s.CustomObjectsApi;
}

export function connect(): TestCluster {
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromFile(inject('kubeconfig'));
  return {
    kubeConfig,
    core: kubeConfig.makeApiClient(k8s.CoreV1Api),
    custom: kubeConfig.makeApiClient(k8s.CustomObjectsApi),
  };
}

/** Creates a uniquely named namespace, e.g. `crd-validation-3f9a1c`. */
export async function freshNamespace(
  cluster: TestCluster,
  prefix: string,
  labels?: Record<string, string>,
): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await cluster.core.createNamespace({ body: { metadata: { name, labels } } });
  return name;
}

/**
 * A schema combinator (oneOf/not) error has field "<nil>" and names its path in the message; the
 * note "some validation rules were not checked" has no path at all and yields ''.
 */
function causeField(cause: { field?: string; message?: string }): string {
  if (cause.field && cause.field !== '<nil>') return cause.field;
  return /"([^"]+)" must/.exec(cause.message ?? '')?.[1] ?? '';
}

export interface ServerRejection {
  status: number;
  message: string;
  /** `details.causes[].field` of the Status the server returned. */
  fields: string[];
}

/** The API server's Status for a failed request, or rethrows anything that is not an API error. */
export function asRejection(err: unknown): ServerRejection {
  if (!(err instanceof k8s.ApiException)) throw err;
  const status = JSON.parse(String(err.body)) as {
    message?: string;
    details?: { causes?: { field?: string; message?: string }[] };
  };
  return {
    status: err.code,
    message: status.message ?? '',
    fields: (status.details?.causes ?? []).map(causeField).filter((f) => f !== ''),
  };
}
