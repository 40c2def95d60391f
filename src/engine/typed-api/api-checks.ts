// The checks of a Template's `spec.api` that need no cluster (ADR 0032): the allowance for its
// group, and that its parameters make a CRD. The operator adds what needs the cluster (a CRD of
// that name that is not this Template's, a breaking change of the published one). Pure.
import { TemplateReason } from '../../api/condition.ts';
import type { Template } from '../../api/template.ts';
import type { Problem } from '../shared/problem.ts';
import { publishedCrd } from './api-crd.ts';
import { groupRefusal, type ApiAllowance } from './api-names.ts';

/**
 * What keeps the Template's kind from being published. `allowance` undefined skips the group's
 * allowance (offline, when no --api-groups was given); reserved groups are refused anyway.
 */
export function apiProblems(template: Template, allowance: ApiAllowance | undefined): Problem[] {
  const api = template.spec.api;
  if (!api) return [];
  const refusal = groupRefusal(
    allowance ?? new Map([['*', new Set([api.group])]]),
    template.metadata.namespace ?? '',
    api.group,
  );
  const problems: Problem[] = refusal
    ? [{ path: 'spec.api.group', reason: TemplateReason.APIGroupNotAllowed, message: refusal }]
    : [];
  const crd = publishedCrd(template);
  if (!crd.ok) problems.push(...crd.problems);
  return problems;
}
