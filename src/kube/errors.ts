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

export function errorForResponse(status: number, body: string): ClusterError {
  return new ClusterError(kindForStatus(status), statusMessage(status, body), status);
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
