// Reads the API server's own request counters (apiserver_request_total from /metrics), so a
// fault test counts deletes and writes as the server saw them, whoever sent them.
import { readFileSync } from 'node:fs';
import { inject } from 'vitest';
import { send } from '../../../tools/control-plane/http.ts';

/** Where the API server is and how to authenticate, from an admin kubeconfig. */
export interface MetricsEndpoint {
  server: string;
  kubeconfigPath: string;
}

export interface RequestFilter {
  /** Default: every verb. */
  verbs?: string[];
  /** Default: every resource. */
  resources?: string[];
  /** Count dry runs too (default: only requests that persisted something). */
  dryRun?: boolean;
  /** Only these HTTP status codes (default: any, failed requests included). */
  codes?: string[];
}

/** The test run's shared control plane (global-setup), as its admin. */
export function sharedEndpoint(): MetricsEndpoint {
  return { server: inject('kubeServer'), kubeconfigPath: inject('kubeconfig') };
}

/** Sum of the samples of metric `name` whose labels `keep` accepts, from the API server's /metrics. */
export async function sumMetric(
  endpoint: MetricsEndpoint,
  name: string,
  keep: (labels: Map<string, string>) => boolean = () => true,
): Promise<number> {
  const kubeconfig = readFileSync(endpoint.kubeconfigPath, 'utf8');
  const token = /token: (\S+)/.exec(kubeconfig)?.[1] ?? '';
  const caData = /certificate-authority-data: (\S+)/.exec(kubeconfig)?.[1] ?? '';
  const ca = Buffer.from(caData, 'base64').toString();
  const { status, body } = await send({ server: endpoint.server, token, ca }, 'GET', '/metrics');
  if (status !== 200) throw new Error(`GET /metrics answered ${status}`);
  let total = 0;
  for (const line of body.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labels = new Map(
      [...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1] ?? '', m[2] ?? '']),
    );
    if (keep(labels)) total += Number(line.split(' ').pop());
  }
  return total;
}

/** Sum of apiserver_request_total over the verbs and resources of `filter`. */
export function countRequests(endpoint: MetricsEndpoint, filter: RequestFilter): Promise<number> {
  const verbs = filter.verbs && new Set(filter.verbs);
  const resources = filter.resources && new Set(filter.resources);
  return sumMetric(
    endpoint,
    'apiserver_request_total',
    (labels) =>
      (filter.dryRun || labels.get('dry_run') === '') &&
      (!verbs || verbs.has(labels.get('verb') ?? '')) &&
      (!resources || resources.has(labels.get('resource') ?? '')) &&
      (!filter.codes || filter.codes.includes(labels.get('code') ?? '')),
  );
}

/**
 * Requests the admission webhook `webhook` rejected, as the API server counts them: denials, and
 * calls that failed under failurePolicy Fail (apiserver_admission_webhook_rejection_count).
 */
export function countWebhookRejections(
  endpoint: MetricsEndpoint,
  webhook: string,
): Promise<number> {
  return sumMetric(
    endpoint,
    'apiserver_admission_webhook_rejection_count',
    (labels) => labels.get('name') === webhook,
  );
}

/** Deletes of `resources` the API server has served (counter survives only one server process). */
export function countDeletes(endpoint: MetricsEndpoint, resources: string[]): Promise<number> {
  return countRequests(endpoint, { verbs: ['DELETE', 'DELETECOLLECTION'], resources });
}
