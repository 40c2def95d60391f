// A controller: a work queue of request keys feeding one Reconciler with bounded concurrency.
// Watches decide which keys to enqueue; the reconciler reads current state for each key.
import { parseRequestKey, requestKey, type Reconciler, type Request } from './reconciler.ts';
import { WorkQueue, type QueueObserver } from './work-queue.ts';

export interface ControllerOptions {
  name: string;
  reconciler: Reconciler;
  concurrency: number;
  observer?: QueueObserver;
  /** Which keys this replica may process (see WorkQueueOptions.admit). */
  admit?: (key: string) => boolean;
}

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;

  constructor(options: ControllerOptions) {
    this.name = options.name;
    this.queue = new WorkQueue(
      (key, signal) => options.reconciler.reconcile(parseRequestKey(key), signal),
      { concurrency: options.concurrency, observer: options.observer, admit: options.admit },
    );
  }

  enqueue(request: Request): void {
    this.queue.add(requestKey(request));
  }

  enqueueAfter(request: Request, ms: number): void {
    this.queue.addAfter(requestKey(request), ms);
  }

  start(): void {
    this.queue.start();
  }

  shutdown(graceMs: number): Promise<void> {
    return this.queue.shutdown(graceMs);
  }

  /** Stops taking work and aborts every reconcile in flight at once. */
  abortNow(): Promise<void> {
    return this.queue.abortNow();
  }
}
