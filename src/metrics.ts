// Prometheus metrics of SPEC §9 (prom-client): reconciles, the work queues, applies, drift
// reverts, orphan deletes, source watches, instances by phase, and rotation lag.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { QueueObserver } from './framework/work-queue.ts';
import type { InformerHealth } from './framework/watches/informer.ts';

export class StencilMetrics {
  readonly registry = new Registry();
  readonly reconcileTotal = new Counter({
    name: 'stencil_reconcile_total',
    help: 'Reconciles by controller and result (success, error, terminal, aborted).',
    labelNames: ['controller', 'result'],
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    name: 'stencil_reconcile_errors_total',
    help: 'Reconciles that failed and will be retried, by controller.',
    labelNames: ['controller'],
    registers: [this.registry],
  });
  readonly reconcileDuration = new Histogram({
    name: 'stencil_reconcile_duration_seconds',
    help: 'Time spent in one reconcile, by controller.',
    labelNames: ['controller'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'stencil_workqueue_depth',
    help: 'Keys waiting in the work queue, by controller.',
    labelNames: ['controller'],
    registers: [this.registry],
  });
  readonly queueRetries = new Counter({
    name: 'stencil_workqueue_retries_total',
    help: 'Keys scheduled for a retry with backoff, by controller.',
    labelNames: ['controller'],
    registers: [this.registry],
  });
  readonly queueLatency = new Histogram({
    name: 'stencil_workqueue_queue_duration_seconds',
    help: 'Time a key waited in the queue before processing, by controller.',
    labelNames: ['controller'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60],
    registers: [this.registry],
  });
  readonly applies = new Counter({
    name: 'stencil_applies_total',
    help: 'Rendered resources by apply result (applied, unchanged, failed).',
    labelNames: ['result'],
    registers: [this.registry],
  });
  readonly driftReverts = new Counter({
    name: 'stencil_drift_reverts_total',
    help: 'Resources re-applied because they drifted.',
    registers: [this.registry],
  });
  readonly orphanDeletes = new Counter({
    name: 'stencil_orphan_deletes_total',
    help: 'Deletes of resources no longer rendered, by result (deleted, pending, failed).',
    labelNames: ['result'],
    registers: [this.registry],
  });
  readonly sourceWatches = new Gauge({
    name: 'stencil_source_watches',
    help: 'Active watch connections on valueFrom sources and rendered kinds.',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  readonly instances = new Gauge({
    name: 'stencil_instances',
    help: 'TemplateInstances by phase (on a shard member, those in the namespaces it owns).',
    labelNames: ['phase'],
    registers: [this.registry],
  });
  readonly rotationLag = new Histogram({
    name: 'stencil_rotation_lag_seconds',
    help: 'Time from a source change to the apply that carried it.',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'stencil_leader',
    help: '1 while this replica reconciles: it holds the leader Lease, or runs without leader election (a shard member always does).',
    registers: [this.registry],
  });
  readonly shardMembers = new Gauge({
    name: 'stencil_shard_members',
    help: 'Replicas sharing the namespaces (live member Leases, or --shard-count).',
    registers: [this.registry],
  });
  readonly shardKeys = new Gauge({
    name: 'stencil_shard_keys',
    help: 'TemplateInstances in the namespaces this replica owns now.',
    registers: [this.registry],
  });
  readonly shardHandoffs = new Counter({
    name: 'stencil_shard_handoffs_total',
    help: 'TemplateInstances handed to another replica (out) or taken from one (in) on a membership change.',
    labelNames: ['direction'],
    registers: [this.registry],
  });
  readonly apiRequests = new Counter({
    name: 'stencil_api_requests_total',
    help: 'Attempts to reach the API server, watches included (verb WATCH), by verb and HTTP status; code 0: no answer (refused, reset, TLS failure, timeout).',
    labelNames: ['verb', 'code'],
    registers: [this.registry],
  });
  readonly informerFailures = new Counter({
    name: 'stencil_informer_failures_total',
    help: 'Failed lists and watches, by informer (its collection path and label selector).',
    labelNames: ['informer'],
    registers: [this.registry],
  });
  readonly informerFailingSince = new Gauge({
    name: 'stencil_informer_failing_since_seconds',
    help: 'When the current run of failures of an informer began (Unix time, seconds); 0 while it lists and watches.',
    labelNames: ['informer'],
    registers: [this.registry],
  });

  /** Beside the default metrics, which leave it out (bench:idle reads it, issue #25). */
  readonly arrayBuffers = new Gauge({
    name: 'stencil_nodejs_array_buffers_bytes',
    help: 'Memory of ArrayBuffers and SharedArrayBuffers, Buffers included (part of external).',
    registers: [this.registry],
    collect() {
      this.set(process.memoryUsage().arrayBuffers);
    },
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'stencil_' });
  }

  /** The informers' failures, as the two informer series above. */
  informerHealth(): InformerHealth {
    return {
      started: (informer) => this.informerFailingSince.set({ informer }, 0),
      failed: (informer, since) => {
        this.informerFailures.inc({ informer });
        this.informerFailingSince.set({ informer }, Math.floor(since / 1000));
      },
      recovered: (informer) => this.informerFailingSince.set({ informer }, 0),
      stopped: (informer) => this.informerFailingSince.remove({ informer }),
    };
  }

  /** Work-queue hooks feeding the reconcile and queue series of one controller. */
  queueObserver(controller: string, next?: QueueObserver): QueueObserver {
    return {
      onDepth: (depth) => this.queueDepth.set({ controller }, depth),
      onQueueLatency: (ms) => this.queueLatency.observe({ controller }, ms / 1000),
      onRetry: (key, delay) => {
        this.queueRetries.inc({ controller });
        next?.onRetry?.(key, delay);
      },
      onProcessed: (key, outcome, ms, error) => {
        this.reconcileTotal.inc({ controller, result: outcome });
        if (outcome === 'error') this.reconcileErrors.inc({ controller });
        this.reconcileDuration.observe({ controller }, ms / 1000);
        next?.onProcessed?.(key, outcome, ms, error);
      },
    };
  }
}
