// What reconcilers read from the operator's caches (informers): cheap, eventually consistent
// lookups used to fan out and to evaluate namespace selectors.
import type { Template } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';

export interface CacheReader {
  /** Labels of a namespace, or undefined when it is not (yet) known. */
  namespaceLabels(name: string): Record<string, string> | undefined;
  /** Instances whose templateRef (namespace defaulted) names this Template. */
  instancesOf(templateNamespace: string, templateName: string): TemplateInstance[];
  templates(): Template[];
}
