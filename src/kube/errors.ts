// The one place where API failures are classified, by HTTP status code (never by message text).
import { ClusterError, type ClusterErrorKind } from '../reconcile/cluster-port.ts';

export function kindForStatus(status: number): ClusterErrorKind {
  if (status === 404) return 'NotFound';
  if (status === 409) return 'Conflict';
  if (status === 400 || status === 422) return 'Invalid';
  if (status === 403) return 'Forbidden';
  if (status === 401) return 'Unauthorized';
  if (status === 410) return 'Gone';
  if (status === 429 || status >= 500 || status === 0) return 'Transient';
  return 'Other';
}

/** Longest wait a Retry-After may impose on one attempt; the server's APF asks for 1 s or so. */
export const MAX_RETRY_AFTER_MS = 30_000;

/**
 * How long to wait before sending the same request again, or undefined if it must not be resent
 * here (the caller's backoff handles it). The API server asks for a retry with 429 Too Many
 * Requests (API Priority and Fairness, max-in-flight) or a 5xx, always with Retry-After in
 * seconds; client-go honours it for any request, as the request was not processed.
 */
export function retryAfterMs(status: number, retryAfter: string | undefined): number | undefined {
  if (status !== 429 && status < 500) return undefined;
  if (retryAfter === undefined || !/^\d+$/.test(retryAfter.trim())) return undefined;
  return Math.min(Number(retryAfter.trim()) * 1000, MAX_RETRY_AFTER_MS);
}

/** The `message` of a Kubernetes Status body, or a generic one; never echoes a request. */
export function statusMessage(status: number, body: string): string {
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed.message === 'string' && parsed.message) return parsed.message;
  } catch {
    // not a Status object
  }
  return `HTTP ${status}`;
}

/** The reasons of the causes a Status body gives in `details.causes` (machine-readable). */
export function statusCauses(body: string): string[] {
  try {
    const parsed = JSON.parse(body) as { details?: { causes?: { reason?: unknown }[] } };
    const causes = parsed.details?.causes;
    if (!Array.isArray(causes)) return [];
    return causes.flatMap((c) => (typeof c?.reason === 'string' ? [c.reason] : []));
  } catch {
    return [];
  }
}

export function errorForResponse(status: number, body: string): ClusterError {
  return new ClusterError(
    kindForStatus(status),
    statusMessage(status, body),
    status,
    statusCauses(body),
  );
}

/** Connection errors, timeouts and aborts: transient by nature. */
export function errorForNetwork(error: unknown): ClusterError {
  const message = error instanceof Error ? error.message : String(error);
  return new ClusterError('Transient', `connection to the API server failed: ${message}`);
}

/** A request cancelled by its caller's signal (a reconcile that must stop, e.g. lost leadership). */
export function errorForAbort(spec: { method: string; path: string }): ClusterError {
  return new ClusterError('Aborted', `${spec.method} ${spec.path} was cancelled`);
}
