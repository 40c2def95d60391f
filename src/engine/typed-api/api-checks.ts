// The checks of a Template's `spec.api` that need no cluster (ADR 0032): the allowance for its
// group, and that its parameters make a CRD. The operator adds what needs the cluster (a CRD of
// that name that is not this Template's, a breaking change of the published one). Pure.
import { TemplateReason } from '../../api/condition.ts';
import type { Template } from '../../api/template.ts';
import type { Problem } from '../shared/problem.ts';
import { publishedCrd, type CustomResourceDefinition } from './api-crd.ts';
import { groupRefusal, type ApiAllowance } from './api-names.ts';

/**
 * What keeps the Template's kind from being published, and the CRD it makes when nothing does.
 * `allowance` undefined skips the group's allowance (offline, when no --api-groups was given);
 * reserved groups are refused anyway.
 */
export function checkApi(
  template: Template,
  allowance: ApiAllowance | undefined,
): { problems: Problem[]; crd?: CustomResourceDefinition } {
  const api = template.spec.api;
  if (!api) return { problems: [] };
  const refusal = groupRefusal(allowance, template.metadata.namespace ?? '', api.group);
  const problems: Problem[] = refusal
    ? [{ path: 'spec.api.group', reason: TemplateReason.APIGroupNotAllowed, message: refusal }]
    : [];
  const crd = publishedCrd(template);
  if (!crd.ok) return { problems: [...problems, ...crd.problems] };
  return problems.length > 0 ? { problems } : { problems, crd: crd.value };
}

/** checkApi's problems alone. */
export function apiProblems(template: Template, allowance: ApiAllowance | undefined): Problem[] {
  return checkApi(template, allowance).problems;
}
