// Static validation of a Template (SPEC §1): schema, Handlebars syntax, helpers, references and
// literal defaults, then a dry-run render with those defaults. Shared by the Template reconciler
// and `stencil validate`.
import { TemplateConditionType as T, TemplateReason as R } from '../../api/condition.ts';
import type { Template, TemplatePhase } from '../../api/template.ts';
import { draft, type ConditionDraft } from '../shared/conditions.ts';
import { coerceParameter, emptyValue } from '../parameters/parameter-types.ts';
import { mergeParameterValue } from '../parameters/value-merge.ts';
import { observedPlacementProblems } from '../health/observed.ts';
import { observedProblems } from '../health/observed-check.ts';
import { formatProblem, type Problem } from '../shared/problem.ts';
import { readyWhenProblems } from '../health/ready-when-check.ts';
import { renderedObjectProblem } from '../objects/annotation-checks.ts';
import { stampSourcesHash } from '../sync/restart-on-change.ts';
import { compileTemplate, renderTemplate } from '../render/render.ts';
import { builtinScope, placeResources } from '../objects/resource-scope.ts';
import { validateAgainstCrd } from '../crd-schema/schema-validation.ts';

export interface TemplateEvaluation {
  phase: TemplatePhase;
  conditions: ConditionDraft[];
  /** Every problem found by the static checks (conditions carry the first few). */
  problems: Problem[];
}

/** Placeholder identity for the dry-run render. */
const DRY_RUN_INSTANCE = {
  name: 'dry-run',
  uid: '00000000-0000-0000-0000-000000000000',
  labels: {},
  annotations: {},
};

function summarize(problems: Problem[]): string {
  const shown = problems.slice(0, 5).map(formatProblem);
  const more = problems.length > 5 ? `; and ${problems.length - 5} more` : '';
  return `${shown.join('; ')}${more}`;
}

/** A spec.sources selector expression the schema cannot check (ADR 0019), naming the field. */
function sourcesProblems(template: Template): Problem[] {
  return (template.spec.sources ?? []).flatMap((entry, i) =>
    (entry.selector?.matchExpressions ?? []).flatMap((expr, j) => {
      const path = `spec.sources[${i}].selector.matchExpressions[${j}].values`;
      const count = expr.values?.length ?? 0;
      const needsValues = expr.operator === 'In' || expr.operator === 'NotIn';
      if (needsValues === count > 0) return [];
      const message = needsValues
        ? `operator ${expr.operator} needs at least one value`
        : `operator ${expr.operator} takes no values`;
      return [{ path, reason: R.ValidationFailed, message }];
    }),
  );
}

function defaultProblems(template: Template): Problem[] {
  return (template.spec.parameters ?? []).flatMap((p, i) => {
    if (p.value === undefined || p.type === undefined) return [];
    const typed = coerceParameter({ name: p.name, type: p.type, value: p.value, secret: false });
    return typed.ok
      ? []
      : typed.problems.map((problem) => ({
          ...problem,
          path: `spec.parameters[${i}].value`,
          reason: R.ValidationFailed,
        }));
  });
}

/**
 * A default that no instance value could merge with (a union-by-key item without its key, two
 * items sharing one, too deep) is the provider's mistake: report it now, not on every instance.
 */
function mergeDefaultProblems(template: Template): Problem[] {
  return (template.spec.parameters ?? []).flatMap((p, i) => {
    if (p.value === undefined || p.merge === undefined || p.merge === 'replace') return [];
    const base = coerceParameter({ name: p.name, type: p.type, value: p.value, secret: false });
    if (!base.ok) return []; // reported by defaultProblems
    const merged = mergeParameterValue({
      name: p.name,
      strategy: p.merge,
      mergeKey: p.mergeKey,
      base: base.value,
      override: emptyValue(p.type),
    });
    return merged.ok
      ? []
      : merged.problems.map((problem) => ({
          ...problem,
          path: `spec.parameters[${i}].value`,
          reason: R.ValidationFailed,
        }));
  });
}

function dryRun(template: Template): ConditionDraft {
  const declared = template.spec.parameters ?? [];
  const missing = declared.filter((p) => p.required || p.value === undefined).map((p) => p.name);
  if (missing.length > 0) {
    return draft(
      T.DryRunRendered,
      false,
      R.DryRunSkipped,
      `no literal default for: ${missing.join(', ')}`,
    );
  }
  const values = Object.fromEntries(
    declared.map((p) => {
      const typed = coerceParameter({
        name: p.name,
        type: p.type,
        value: p.value ?? null,
        secret: false,
      });
      return [p.name, typed.ok ? typed.value : null];
    }),
  );
  const namespace = template.metadata.namespace ?? 'default';
  const compiled = compileTemplate(
    template.spec.handlebars,
    declared.map((p) => p.name),
  );
  if (!compiled.ok)
    return draft(T.DryRunRendered, false, R.RenderFailed, summarize(compiled.problems));
  const rendered = renderTemplate(compiled.value, {
    parameters: values,
    instance: { ...DRY_RUN_INSTANCE, namespace },
    template: {
      name: template.metadata.name ?? '',
      namespace,
      generation: template.metadata.generation ?? 0,
    },
  });
  if (!rendered.ok)
    return draft(T.DryRunRendered, false, R.RenderFailed, summarize(rendered.problems));
  const placed = placeResources(
    rendered.value.map((d) => d.object),
    { instanceNamespace: namespace, spec: template.spec, scopeOf: builtinScope },
  );
  if (!placed.ok) return draft(T.DryRunRendered, false, R.RenderFailed, summarize(placed.problems));
  // The annotation checks every render runs (ADR 0017): strings, waves, restart-on-change.
  const annotated = placed.value.map(renderedObjectProblem).find((p) => p !== undefined);
  if (annotated) return draft(T.DryRunRendered, false, R.RenderFailed, annotated);
  const hashed = stampSourcesHash(
    placed.value,
    { values, status: declared.map((p) => ({ name: p.name })) },
    DRY_RUN_INSTANCE.uid,
  );
  if (!hashed.ok) return draft(T.DryRunRendered, false, R.RenderFailed, summarize(hashed.problems));
  // The dry run has no live producers: every observed value is "" here, as on an instance's
  // first pass, so a body that cannot render that way is refused now rather than stuck later.
  const misplaced = observedPlacementProblems(
    placed.value,
    rendered.value.map((d) => d.observed),
    namespace,
  );
  if (misplaced.length > 0)
    return draft(T.DryRunRendered, false, R.RenderFailed, summarize(misplaced));
  return draft(
    T.DryRunRendered,
    true,
    R.RenderSucceeded,
    `rendered ${placed.value.length} resource(s) with the literal defaults`,
  );
}

/** Evaluates a Template object (as read from the API server or a file). */
export function evaluateTemplate(object: unknown): TemplateEvaluation {
  const schemaProblems = validateAgainstCrd('Template', object);
  if (schemaProblems.length > 0) {
    return {
      phase: 'Invalid',
      problems: schemaProblems,
      conditions: [draft(T.Valid, false, R.SpecInvalid, summarize(schemaProblems))],
    };
  }
  const template = object as Template;
  const compiled = compileTemplate(
    template.spec.handlebars,
    (template.spec.parameters ?? []).map((p) => p.name),
  );
  const problems = [
    ...(compiled.ok
      ? observedProblems(template.spec.handlebars, compiled.value.observed)
      : compiled.problems),
    ...readyWhenProblems(template.spec.handlebars),
    ...defaultProblems(template),
    ...mergeDefaultProblems(template),
    ...sourcesProblems(template),
  ];
  if (problems.length > 0) {
    return {
      phase: 'Invalid',
      problems,
      conditions: [draft(T.Valid, false, R.ValidationFailed, summarize(problems))],
    };
  }
  const valid = draft(
    T.Valid,
    true,
    R.ValidationSucceeded,
    'the template parsed and every static check passed',
  );
  const dry = dryRun(template);
  const phase: TemplatePhase = dry.reason === R.RenderFailed ? 'Invalid' : 'Valid';
  return { phase, problems: [], conditions: [valid, dry] };
}
