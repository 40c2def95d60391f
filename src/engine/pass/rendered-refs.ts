// The status entry of a rendered object, as a pass reports it in status.renderedResources.
import type { KubeObject } from '../../api/object-meta.ts';
import type { RenderedResourceRef } from '../../api/template-instance.ts';
import type { Health } from '../health/health.ts';

/**
 * The status entry of a rendered object. `observedGeneration` is what the name says in
 * Kubernetes: the generation the object's own controller reports having observed
 * (`status.observedGeneration`, as of this reconcile), absent for objects that report none.
 */
export function renderedRef(
  object: KubeObject,
  status: '' | 'Failed' = '',
  health?: Health,
): RenderedResourceRef {
  const observed = (object as { status?: { observedGeneration?: unknown } }).status
    ?.observedGeneration;
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    name: object.metadata.name ?? '',
    ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
    ...(typeof observed === 'number' ? { observedGeneration: observed } : {}),
    ...(status ? { status } : {}),
    ...(health ? { health: health.status } : {}),
    ...(health?.message ? { healthMessage: health.message.slice(0, 1024) } : {}),
  };
}
