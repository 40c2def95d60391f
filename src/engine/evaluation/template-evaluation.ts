// Static validation of a Template (SPEC §1): schema, Handlebars syntax, helpers, references and
// literal defaults, then a dry-run render with those defaults. Shared by the Template reconciler
// and `stencil validate`.
import { TemplateConditionType as T, TemplateReason as R } from '../../api/condition.ts';
import type { JsonValue, KubeObject } from '../../api/object-meta.ts';
import type {
  ParameterType,
  Template,
  ParameterDeclaration,
  TemplatePhase,
} from '../../api/template.ts';
import type { Kinded, ObjectSchemas } from '../object-schema/object-schema.ts';
import { objectSchemaProblems, placementProblems } from './schema-checks.ts';
import { draft, type ConditionDraft } from '../shared/conditions.ts';
import { coerceParameter, emptyValue } from '../parameters/parameter-types.ts';
import { checkConstraints, declarationFaults } from '../parameters/parameter-constraints.ts';
import { mergeParameterValue } from '../parameters/value-merge.ts';
import { observedPlacementProblems } from '../health/observed.ts';
import { observedProblems } from '../health/observed-check.ts';
import { summarizeProblems, type Problem } from '../shared/problem.ts';
import { readyWhenProblems } from '../health/ready-when-check.ts';
import { renderedObjectProblem } from '../objects/annotation-checks.ts';
import { stampSourcesHash } from '../sync/restart-on-change.ts';
import { compileTemplate, type RenderedDocument, type RenderOutcome } from '../render/render.ts';
import {
  renderInProcess,
  runRenderJob,
  type RenderJob,
  type RenderRunner,
} from '../render/render-job.ts';
import { builtinScope, placeResources } from '../objects/resource-scope.ts';
import { validateAgainstCrd } from '../crd-schema/schema-validation.ts';

export interface TemplateEvaluation {
  phase: TemplatePhase;
  conditions: ConditionDraft[];
  /** Every problem found by the static checks (conditions carry the first few). */
  problems: Problem[];
  /**
   * The kinds of the objects the check rendered (with the literal defaults, placeholders for the
   * others), each once: what a caller prepares the schemas for (evaluateTemplateChecked).
   */
  renderedKinds: Kinded[];
}

/** Placeholder identity for the dry-run render. */
const DRY_RUN_INSTANCE = {
  name: 'dry-run',
  uid: '00000000-0000-0000-0000-000000000000',
  labels: {},
  annotations: {},
};

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

/**
 * A literal default that fails its type, or (for a parameter whose default applies, one not
 * `required`) its constraints: every instance that leaves it unset would fail the same way.
 * Constraints that are wrong in themselves are reported once, by constraintProblems.
 */
function defaultProblems(template: Template): Problem[] {
  return (template.spec.parameters ?? []).flatMap((p, i) => {
    if (p.value === undefined || p.type === undefined) return [];
    const typed = coerceParameter({ name: p.name, type: p.type, value: p.value, secret: false });
    const checked =
      typed.ok && !p.required && declarationFaults(p).length === 0
        ? checkConstraints({ declaration: p, value: typed.value, secret: false })
        : typed;
    return checked.ok
      ? []
      : checked.problems.map((problem) => ({
          ...problem,
          path: `spec.parameters[${i}].value`,
          reason: R.ValidationFailed,
        }));
  });
}

/** Constraints wrong in themselves: an enum off a scalar type or mistyped, a pattern not RE2. */
function constraintProblems(template: Template): Problem[] {
  return (template.spec.parameters ?? []).flatMap((p, i) =>
    declarationFaults(p).map(({ field, message }) => ({
      path: `spec.parameters[${i}].${field}`,
      reason: R.ValidationFailed,
      message,
    })),
  );
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

/** Stands for a parameter without a literal default in the Template check, by declared type. */
const PLACEHOLDER: Readonly<Record<ParameterType, JsonValue>> = {
  string: '',
  number: 1,
  bool: false,
  array: [],
  object: {},
};

/** The values of the trial render: literal defaults, placeholders for the others. */
function trialValues(declared: ParameterDeclaration[]): {
  values: Record<string, JsonValue>;
  placeholders: Set<string>;
} {
  const placeholders = new Set<string>();
  const values = Object.fromEntries(
    declared.map((p) => {
      if (p.required || p.value === undefined) {
        placeholders.add(p.name);
        // A string reads `<name>`, so a message about an object it named says it was a stand-in.
        const type = p.type ?? 'string';
        return [p.name, type === 'string' ? `<${p.name}>` : PLACEHOLDER[type]];
      }
      const typed = coerceParameter({ name: p.name, type: p.type, value: p.value, secret: false });
      return [p.name, typed.ok ? typed.value : null];
    }),
  );
  return { values, placeholders };
}

/** What the trial render of a Template gives: its objects, or the condition that says why not. */
type Trial =
  | { ok: false; condition: ConditionDraft }
  | {
      ok: true;
      documents: RenderedDocument[];
      placed: KubeObject[];
      values: Record<string, JsonValue>;
      placeholders: Set<string>;
    };

/**
 * The trial render as a job (literal defaults, placeholders for the others), so the operator can
 * run it in its render pool under the deadline of every render (ADR 0018): a Template is written
 * by a person too, and its render must not hold the one event loop every tenant shares.
 */
export function trialJob(template: Template): RenderJob {
  const declared = template.spec.parameters ?? [];
  const namespace = template.metadata.namespace ?? 'default';
  return {
    template: `${namespace}/${template.metadata.name ?? ''}`,
    body: template.spec.handlebars,
    parameters: declared.map((p) => p.name),
    context: {
      parameters: trialValues(declared).values,
      instance: { ...DRY_RUN_INSTANCE, namespace },
      template: {
        name: template.metadata.name ?? '',
        namespace,
        generation: template.metadata.generation ?? 0,
      },
    },
    producers: new Map(),
    secret: [],
  };
}

/** The trial render's objects, placed as the Template's policy says, or why there are none. */
function trialOf(template: Template, rendered: RenderOutcome): Trial {
  const { values, placeholders } = trialValues(template.spec.parameters ?? []);
  const namespace = template.metadata.namespace ?? 'default';
  // A failure with placeholders says nothing about the Template: the dry run is skipped.
  const refused = (problems: Problem[]): Trial => ({
    ok: false,
    condition:
      placeholders.size > 0
        ? skipped(placeholders)
        : draft(T.DryRunRendered, false, R.RenderFailed, summarizeProblems(problems)),
  });
  if (!rendered.ok) return refused(rendered.problems);
  const placed = placeResources(
    rendered.value.map((d) => d.object),
    { instanceNamespace: namespace, spec: template.spec, scopeOf: builtinScope },
  );
  if (!placed.ok) return refused(placed.problems);
  return { ok: true, documents: rendered.value, placed: placed.value, values, placeholders };
}

function skipped(placeholders: ReadonlySet<string>): ConditionDraft {
  const names = [...placeholders].join(', ');
  return draft(T.DryRunRendered, false, R.DryRunSkipped, `no literal default for: ${names}`);
}

/**
 * The annotation checks every render runs (ADR 0017: strings, waves, restart-on-change), on the
 * objects whose annotations no placeholder produced.
 */
function annotationProblem(trial: Extract<Trial, { ok: true }>): string | undefined {
  return trial.placed
    .map((object, i) => {
      const fromPlaceholder = trial.documents[i]!.origins.some(
        (o) =>
          o.pointer.startsWith('/metadata/annotations/') &&
          o.parameter !== undefined &&
          trial.placeholders.has(o.parameter),
      );
      return fromPlaceholder ? undefined : renderedObjectProblem(object);
    })
    .find((p) => p !== undefined);
}

/** The dry-run condition of a trial render made with the literal defaults only. */
function dryRun(
  template: Template,
  trial: Extract<Trial, { ok: true }>,
  notes: string[],
): ConditionDraft {
  const declared = template.spec.parameters ?? [];
  const namespace = template.metadata.namespace ?? 'default';
  const hashed = stampSourcesHash(
    trial.placed,
    { values: trial.values, status: declared.map((p) => ({ name: p.name })) },
    DRY_RUN_INSTANCE.uid,
  );
  if (!hashed.ok)
    return draft(T.DryRunRendered, false, R.RenderFailed, summarizeProblems(hashed.problems));
  // The dry run has no live producers: every observed value is "" here, as on an instance's
  // first pass, so a body that cannot render that way is refused now rather than stuck later.
  const misplaced = observedPlacementProblems(
    trial.placed,
    trial.documents.map((d) => d.observed),
    namespace,
  );
  if (misplaced.length > 0)
    return draft(T.DryRunRendered, false, R.RenderFailed, summarizeProblems(misplaced));
  const skippedKinds = notes.length > 0 ? `; ${notes.join('; ')}` : '';
  return draft(
    T.DryRunRendered,
    true,
    R.RenderSucceeded,
    `rendered ${trial.placed.length} resource(s) with the literal defaults${skippedKinds}`,
  );
}

/**
 * The schema checks of the trial render: values against the schemas of their kinds (fields a
 * placeholder produced are not judged) and the types of parameter placements.
 */
function schemaFindings(
  template: Template,
  trial: Extract<Trial, { ok: true }>,
  schemas: ObjectSchemas | undefined,
): { problems: Problem[]; notes: string[] } {
  if (!schemas) return { problems: [], notes: [] };
  const rendered = trial.placed.map((object, i) => ({
    object,
    origins: trial.documents[i]!.origins,
  }));
  const declared = new Map((template.spec.parameters ?? []).map((p) => [p.name, p.type]));
  const placements = placementProblems(rendered, schemas, declared, R.ValidationFailed);
  // A misplaced parameter's value is also of the wrong type there: said once, as the placement.
  const values = objectSchemaProblems(rendered, schemas, R.ValidationFailed, {
    ignored: trial.placeholders,
    known: placements.fields,
  });
  return { problems: [...placements.problems, ...values.problems], notes: values.notes };
}

/** The checks before the trial render: the schema, then the static ones. */
function precheck(object: unknown): TemplateEvaluation | Template {
  const schemaProblems = validateAgainstCrd('Template', object);
  if (schemaProblems.length > 0) {
    return {
      phase: 'Invalid',
      problems: schemaProblems,
      conditions: [draft(T.Valid, false, R.SpecInvalid, summarizeProblems(schemaProblems))],
      renderedKinds: [],
    };
  }
  const template = object as Template;
  const problems = staticProblems(template);
  return problems.length > 0 ? invalid(problems, []) : template;
}

const isEvaluation = (checked: TemplateEvaluation | Template): checked is TemplateEvaluation =>
  'phase' in checked;

/** The verdict on a Template that passed the prechecks, from its trial render. */
function judged(
  template: Template,
  rendered: RenderOutcome,
  schemas?: ObjectSchemas,
): TemplateEvaluation {
  const trial = trialOf(template, rendered);
  if (!trial.ok) return valid(trial.condition, []);
  const renderedKinds = kindsOf(trial.placed);
  const problems: Problem[] = [];
  const annotated = annotationProblem(trial);
  if (annotated)
    problems.push({ path: 'spec.handlebars', reason: R.ValidationFailed, message: annotated });
  const findings = schemaFindings(template, trial, schemas);
  problems.push(...findings.problems);
  if (problems.length > 0) return invalid(problems, renderedKinds);
  const dry =
    trial.placeholders.size > 0
      ? skipped(trial.placeholders)
      : dryRun(template, trial, findings.notes);
  return valid(dry, renderedKinds);
}

/**
 * Evaluates a Template object (as read from the API server or a file), rendering on this thread.
 * With `schemas`, the rendered objects are checked against the schemas of their kinds, and the
 * parameters placed as whole field values against the fields' types.
 */
export function evaluateTemplate(object: unknown, schemas?: ObjectSchemas): TemplateEvaluation {
  const checked = precheck(object);
  if (isEvaluation(checked)) return checked;
  return judged(checked, runRenderJob(trialJob(checked)), schemas);
}

/** The checks that need no render: Handlebars, helpers, references, defaults, sources. */
function staticProblems(template: Template): Problem[] {
  const compiled = compileTemplate(
    template.spec.handlebars,
    (template.spec.parameters ?? []).map((p) => p.name),
  );
  return [
    ...(compiled.ok
      ? observedProblems(template.spec.handlebars, compiled.value.observed)
      : compiled.problems),
    ...readyWhenProblems(template.spec.handlebars),
    ...defaultProblems(template),
    ...constraintProblems(template),
    ...mergeDefaultProblems(template),
    ...sourcesProblems(template),
  ];
}

function invalid(problems: Problem[], renderedKinds: Kinded[]): TemplateEvaluation {
  return {
    phase: 'Invalid',
    problems,
    conditions: [draft(T.Valid, false, R.ValidationFailed, summarizeProblems(problems))],
    renderedKinds,
  };
}

/** Valid, with the dry run's condition (a dry run that fails makes the phase Invalid). */
function valid(dry: ConditionDraft, renderedKinds: Kinded[]): TemplateEvaluation {
  const checked = draft(
    T.Valid,
    true,
    R.ValidationSucceeded,
    'the template parsed and every static check passed',
  );
  const phase: TemplatePhase = dry.reason === R.RenderFailed ? 'Invalid' : 'Valid';
  return { phase, problems: [], conditions: [checked, dry], renderedKinds };
}

function kindsOf(objects: readonly KubeObject[]): Kinded[] {
  const seen = new Map(objects.map((o) => [`${o.apiVersion} ${o.kind}`, o]));
  return [...seen.values()].map(({ apiVersion, kind }) => ({ apiVersion, kind }));
}

/**
 * evaluateTemplate with the trial render run by `renderer` (the operator's render pool), and with
 * the schema checks when `schemas` are given, prepared for the kinds the Template renders.
 */
export async function evaluateTemplateChecked(
  object: unknown,
  schemas: ObjectSchemas | undefined,
  renderer: RenderRunner = renderInProcess,
): Promise<TemplateEvaluation> {
  const checked = precheck(object);
  if (isEvaluation(checked)) return checked;
  const rendered = await renderer(trialJob(checked));
  const first = judged(checked, rendered);
  if (!schemas || first.renderedKinds.length === 0) return first;
  await schemas.prepare(first.renderedKinds);
  return judged(checked, rendered, schemas);
}
