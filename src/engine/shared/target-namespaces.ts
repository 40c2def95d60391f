// Which namespaces may instantiate a Template (SPEC §4): its own when targetNamespaces is
// omitted, an explicit list (or exactly ["*"]), or a label selector on the namespace.
import type { LabelSelector } from '../../api/object-meta.ts';
import type { Template } from '../../api/template.ts';

/** Standard Kubernetes LabelSelector semantics; an empty selector matches everything. */
export function selectorMatches(selector: LabelSelector, labels: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (!Object.hasOwn(labels, key) || labels[key] !== value) return false;
  }
  return (selector.matchExpressions ?? []).every((expr) => {
    const present = Object.hasOwn(labels, expr.key);
    const value = present ? labels[expr.key] : undefined;
    switch (expr.operator) {
      case 'In':
        return present && (expr.values ?? []).includes(value ?? '');
      case 'NotIn':
        return !present || !(expr.values ?? []).includes(value ?? '');
      case 'Exists':
        return present;
      case 'DoesNotExist':
        return !present;
      default:
        return false;
    }
  });
}

/** True when a Template uses a selector, so namespace label changes must re-evaluate it. */
export function usesNamespaceSelector(template: Template): boolean {
  return template.spec.targetNamespaces?.selector !== undefined;
}

/**
 * Whether an instance in `namespace` (with `labels`) may use `template`; `undefined` when
 * allowed, else the message of NamespaceNotPermitted.
 */
export function targetNamespaceRefusal(
  template: Template,
  namespace: string,
  labels: Record<string, string>,
): string | undefined {
  const target = template.spec.targetNamespaces;
  const templateNamespace = template.metadata.namespace ?? '';
  const templateName = `${templateNamespace}/${template.metadata.name ?? ''}`;
  if (!target) {
    if (namespace === templateNamespace) return undefined;
    return `namespace "${namespace}" may not instantiate Template ${templateName}: the Template sets no targetNamespaces, so only its own namespace "${templateNamespace}" may`;
  }
  const literal = target.explicit?.allow?.literal ?? [];
  if (literal.length === 1 && literal[0] === '*') return undefined;
  if (literal.includes(namespace)) return undefined;
  if (target.selector && selectorMatches(target.selector, labels)) return undefined;
  return `namespace "${namespace}" may not instantiate Template ${templateName}: it is not in targetNamespaces.explicit and its labels do not match targetNamespaces.selector`;
}
