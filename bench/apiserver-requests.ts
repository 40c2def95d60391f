// The API server's own count of the requests it served (apiserver_request_total), read before and
// after a phase of the benchmark: what the operator sent, independent of the operator's word.
import { send, type Endpoint } from '../tools/control-plane/http.ts';
import { samples } from './prometheus-text.ts';

/**
 * The resources Stencil reads and writes in this workload; the rest is the server's own. A peer
 * operator (bench/kro-peer.ts) passes its own set to requestCounts.
 */
export const OPERATOR_RESOURCES: ReadonlySet<string> = new Set([
  'templateinstances',
  'templates',
  'configmaps',
  'secrets',
  'services',
  'events',
]);
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'APPLY', 'DELETE']);

/** Counter value by `verb resource/subresource dryRun`. */
export type RequestCounts = Map<string, number>;

export async function requestCounts(
  server: Endpoint,
  resources: ReadonlySet<string> = OPERATOR_RESOURCES,
): Promise<RequestCounts> {
  const response = await send(server, 'GET', '/metrics');
  if (response.status !== 200) throw new Error(`API server /metrics: HTTP ${response.status}`);
  const counts: RequestCounts = new Map();
  for (const s of samples(response.body, 'apiserver_request_total')) {
    const resource = s.labels.get('resource') ?? '';
    if (!resources.has(resource)) continue;
    const subresource = s.labels.get('subresource') ? `/${s.labels.get('subresource')}` : '';
    const dryRun = s.labels.get('dry_run') ? ' dry-run' : '';
    const key = `${s.labels.get('verb') ?? ''} ${resource}${subresource}${dryRun}`;
    counts.set(key, (counts.get(key) ?? 0) + s.value);
  }
  return counts;
}

export interface RequestSummary {
  writes: number;
  dryRuns: number;
  /** GET and LIST (watches are counted apart, by the watch row). */
  reads: number;
  byKey: Record<string, number>;
}

/**
 * What was served between two readings. `exclude` drops keys the benchmark itself sent (its own
 * creation of instances), so the rest is the operator's.
 */
export function requestsBetween(
  before: RequestCounts,
  after: RequestCounts,
  exclude: (key: string) => boolean = () => false,
): RequestSummary {
  const summary: RequestSummary = { writes: 0, dryRuns: 0, reads: 0, byKey: {} };
  for (const [key, value] of after) {
    const delta = value - (before.get(key) ?? 0);
    if (delta <= 0 || exclude(key)) continue;
    summary.byKey[key] = delta;
    const verb = key.split(' ')[0] ?? '';
    if (key.endsWith(' dry-run')) summary.dryRuns += delta;
    else if (MUTATING.has(verb)) summary.writes += delta;
    else if (verb === 'GET' || verb === 'LIST') summary.reads += delta;
  }
  return summary;
}

/** Watch connections the API server holds right now, by resource (apiserver_longrunning_requests). */
export async function watchesByResource(server: Endpoint): Promise<Record<string, number>> {
  const response = await send(server, 'GET', '/metrics');
  const watches: Record<string, number> = {};
  for (const s of samples(response.body, 'apiserver_longrunning_requests')) {
    if (s.labels.get('verb') !== 'WATCH' || s.value === 0) continue;
    const resource = s.labels.get('resource') ?? '';
    watches[resource] = (watches[resource] ?? 0) + s.value;
  }
  return watches;
}
