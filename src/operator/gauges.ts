// The gauges read off the caches just before a scrape: instances by phase, and the running
// dependency watches by kind (drift watches marked as such).
import type { TemplateInstance } from '../api/template-instance.ts';
import type { WatchKey } from '../framework/dependency-key.ts';
import type { StencilMetrics } from '../metrics.ts';

export function refreshGauges(
  metrics: StencilMetrics,
  instances: TemplateInstance[],
  watches: WatchKey[],
): void {
  metrics.instances.reset();
  for (const instance of instances)
    metrics.instances.inc({ phase: instance.status?.phase ?? 'Pending' });
  metrics.sourceWatches.reset();
  for (const key of watches)
    metrics.sourceWatches.inc({ kind: key.type === 'drift' ? `${key.kind} (drift)` : key.kind });
}
