// Checks of a TemplateInstance against its Template that need no cluster reads: unknown
// parameters, overrides of locked parameters, missing required values, literal value types and
// constraints.
// `stencil validate` runs them; the operator gets the same answers from resolveParameters.
import { InstanceReason } from '../../api/condition.ts';
import type { Template } from '../../api/template.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import { coerceParameter } from './parameter-types.ts';
import { checkConstraints } from './parameter-constraints.ts';
import type { Problem } from '../shared/problem.ts';

export function checkInstanceStatically(template: Template, instance: TemplateInstance): Problem[] {
  const declared = new Map((template.spec.parameters ?? []).map((p) => [p.name, p]));
  const given = instance.spec.parameters ?? [];
  const problems: Problem[] = [];
  given.forEach((p, i) => {
    const path = `spec.parameters[${i}]`;
    const declaration = declared.get(p.name);
    if (!declaration) {
      problems.push({
        path,
        reason: InstanceReason.InvalidParameter,
        message: `parameter "${p.name}": the Template declares no such parameter`,
      });
    } else if (declaration.disableOverride) {
      problems.push({
        path,
        reason: InstanceReason.OverrideNotAllowed,
        message: `parameter "${p.name}": the Template does not allow overriding it (disableOverride)`,
      });
    } else if (p.value !== undefined) {
      const typed = coerceParameter({
        name: p.name,
        type: declaration.type,
        value: p.value,
        secret: false,
      });
      const checked = typed.ok
        ? checkConstraints({ declaration, value: typed.value, secret: false })
        : typed;
      if (!checked.ok) problems.push(...checked.problems.map((q) => ({ ...q, path })));
    }
  });
  const names = new Set(given.map((p) => p.name));
  for (const declaration of declared.values()) {
    if (declaration.required && !names.has(declaration.name)) {
      problems.push({
        path: 'spec.parameters',
        reason: InstanceReason.InvalidParameter,
        message: `parameter "${declaration.name}" is required: the instance must set it`,
      });
    }
  }
  return problems;
}
