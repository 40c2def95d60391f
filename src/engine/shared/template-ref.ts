// Which Template an instance names. A leaf beside the evaluation: the status, the CLI, the
// webhook and the operator's routing all need it without importing the evaluation itself.
import type { TemplateInstance } from '../../api/template-instance.ts';

/** `templateRef` with its namespace defaulted to the instance's. */
export function templateRefOf(instance: TemplateInstance): { name: string; namespace: string } {
  return {
    name: instance.spec.templateRef.name,
    namespace: instance.spec.templateRef.namespace ?? instance.metadata.namespace ?? '',
  };
}
