// The reconciler contract of our controller framework (controller-runtime's, in miniature):
// level-based requests, outcomes as values, TerminalError for input that retrying cannot fix.

/** What to reconcile: a namespaced name. The reconciler reads current state itself. */
export interface Request {
  namespace: string;
  name: string;
}

/** `requeueAfter` (ms) asks for another pass later; omit it when the object is settled. */
export interface Result {
  requeueAfter?: number;
}

/**
 * Thrown for a failure that is already reported (in a condition) and that retrying cannot fix:
 * the key is not retried with backoff; the next change to an input enqueues it again.
 */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
}

export interface Reconciler {
  /** Throw to retry with per-key exponential backoff; return a Result otherwise. */
  reconcile(request: Request, signal: AbortSignal): Promise<Result>;
}

export function requestKey(request: Request): string {
  return `${request.namespace}/${request.name}`;
}

export function parseRequestKey(key: string): Request {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
