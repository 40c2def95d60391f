// Which Template content an instance is rendered from, decided in one place: today the live
// Template its templateRef names. Revisions and pinning change this function, and every reader
// (the instance reconciler, the strict webhook's ignoreFields) follows.
import type { Template } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import { API_VERSION, TEMPLATE_KIND } from '../api/well-known.ts';
import { templateRefOf } from '../engine/instance-evaluation.ts';
import type { ClusterPort } from './cluster-port.ts';
import type { CacheReader } from './reader.ts';

/**
 * The Template this instance should be on; undefined when it does not exist. The operator's cache
 * answers when it has the Template (a newer version than the cache's brings its own event, which
 * re-enqueues every instance that names it); only a Template the cache has not seen is read.
 */
export async function templateFor(
  cluster: ClusterPort,
  instance: TemplateInstance,
  cache?: Pick<CacheReader, 'template'>,
): Promise<Template | undefined> {
  const ref = templateRefOf(instance);
  const cached = cache?.template(ref.namespace, ref.name);
  if (cached) return cached;
  return (await cluster.get({ apiVersion: API_VERSION, kind: TEMPLATE_KIND, ...ref })) as
    Template | undefined;
}
