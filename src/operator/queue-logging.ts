// How the work queues' outcomes are logged: a debug line per reconciled key, an info line with
// the error for a failure (retried) or a terminal failure (waits for an input to change).
import type { QueueObserver } from '../framework/work-queue.ts';
import type { Logger } from '../log.ts';

export function queueLogging(log: Logger, controller: string): QueueObserver {
  return {
    onProcessed: (key, outcome, ms, error) => {
      const [namespace, name] = key.split('/');
      if (outcome === 'success') log.debug('reconciled', { controller, namespace, name, ms });
      else if (outcome === 'aborted')
        log.debug('reconcile aborted: another replica owns the key now', {
          controller,
          namespace,
          name,
          ms,
        });
      else
        log.info(
          outcome === 'terminal'
            ? 'reconcile stopped until an input changes'
            : 'reconcile failed; will retry',
          { controller, namespace, name, ms, error: (error as Error)?.message ?? String(error) },
        );
    },
  };
}
