// Which Template content an instance is rendered from, decided in one place: today the live
// Template its templateRef names. Revisions and pinning change this function, and every reader
// (the instance reconciler, the strict webhook's ignoreFields) follows.
import type { Template } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import { API_VERSION, TEMPLATE_KIND } from '../api/well-known.ts';
import { templateRefOf } from '../engine/instance-evaluation.ts';
import type { ClusterPort } from './cluster-port.ts';

/** The Template this instance should be on; undefined when it does not exist. */
export async function templateFor(
  cluster: ClusterPort,
  instance: TemplateInstance,
): Promise<Template | undefined> {
  return (await cluster.get({
    apiVersion: API_VERSION,
    kind: TEMPLATE_KIND,
    ...templateRefOf(instance),
  })) as Template | undefined;
}
