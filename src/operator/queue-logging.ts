// How the work queues' outcomes are logged: a debug line per reconciled key, an info line with
// the error for a failure (retried) or a terminal failure (waits for an input to change). A
// controller that holds Secret data logs only messages a Redactor went over.
import type { QueueObserver } from '../framework/work-queue.ts';
import type { Logger } from '../log.ts';
import { loggableMessage } from '../engine/redaction/redaction.ts';

export interface QueueLoggingOptions {
  /**
   * The controller's passes read Secret data (the instance controller): an error's message is
   * logged only when it was redacted, else only its class.
   */
  readsSecrets?: boolean;
}

function rawMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function queueLogging(
  log: Logger,
  controller: string,
  options: QueueLoggingOptions = {},
): QueueObserver {
  const describe = options.readsSecrets ? loggableMessage : rawMessage;
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
          { controller, namespace, name, ms, error: describe(error) },
        );
    },
  };
}
