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

/** Sum of apiserver_request_total over the verbs and resources of `filter`. */
export async function countRequests(
  endpoint: MetricsEndpoint,
  filter: RequestFilter,
): Promise<number> {
  const kubeconfig = readFileSync(endpoint.kubeconfigPath, 'utf8');
  const token = /token: (\S+)/.exec(kubeconfig)?.[1] ?? '';
  const caData = /certificate-authority-data: (\S+)/.exec(kubeconfig)?.[1] ?? '';
  const ca = Buffer.from(caData, 'base64').toString();
  const { status, body } = await send({ server: endpoint.server, token, ca }, 'GET', '/metrics');
  if (status !== 200) throw new Error(`GET /metrics answered ${status}`);
  const verbs = filter.verbs && new Set(filter.verbs);
  const resources = filter.resources && new Set(filter.resources);
  let total = 0;
  for (const line of body.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = new Map(
      [...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1] ?? '', m[2] ?? '']),
    );
    if (!filter.dryRun && labels.get('dry_run') !== '') continue;
    if (verbs && !verbs.has(labels.get('verb') ?? '')) continue;
    if (resources && !resources.has(labels.get('resource') ?? '')) continue;
    if (filter.codes && !filter.codes.includes(labels.get('code') ?? '')) continue;
    total += Number(line.split(' ').pop());
  }
  return total;
}

/** Deletes of `resources` the API server has served (counter survives only one server process). */
export function countDeletes(endpoint: MetricsEndpoint, resources: string[]): Promise<number> {
  return countRequests(endpoint, { verbs: ['DELETE', 'DELETECOLLECTION'], resources });
}
