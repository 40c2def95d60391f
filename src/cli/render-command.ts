// `stencil render`: renders an instance offline exactly as the operator would (the same
// evaluateInstance path), resolving valueFrom and `observed` against the objects in --objects
// files, and showing the waves and what `observed` read.
import { stringify } from 'yaml';
import type { Template } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import { InstanceConditionType, InstanceReason } from '../api/condition.ts';
import type { KubeObject } from '../api/object-meta.ts';
import { draft, readyCondition, type ConditionDraft } from '../engine/shared/conditions.ts';
import {
  evaluateInstance,
  type InstanceEvaluation,
} from '../engine/evaluation/instance-evaluation.ts';
import { describeObject, waveOf } from '../engine/objects/inventory.ts';
import { observedProducer, OVER_LIMIT, type ObservedInput } from '../engine/health/observed.ts';
import { MemorySource } from '../engine/sources/memory-source.ts';
import { formatProblem } from '../engine/shared/problem.ts';
import { validateAgainstCrd, type CrdKind } from '../engine/crd-schema/schema-validation.ts';
import { templateRefOf } from '../engine/shared/template-ref.ts';
import {
  parseCommandLine,
  stringFlag,
  stringFlags,
  usageLine,
  UsageError,
  type CommandSpec,
} from '../command-line.ts';
import { readObjects, readSingle } from './manifest-files.ts';
import { CRDS_FLAG, offlineSchemas } from './offline-schemas.ts';
import { instanceDocument, isTypedInstanceOf, typedInstanceOf } from './typed-instance.ts';
import type { ObjectSchemas } from '../engine/object-schema/object-schema.ts';
import {
  chooseOfflineTemplate,
  readRevisions,
  revisionNumber,
  type OfflineTemplate,
  type RevisionsFile,
} from './revisions-file.ts';

export const RENDER_COMMAND: CommandSpec = {
  name: 'render',
  synopsis:
    '--template T.yaml --instance I.yaml [--objects O.yaml]... [--crds CRDS.yaml]... [--revisions R.yaml [--revision N]] [--output yaml|json]',
  summary:
    'Renders a TemplateInstance offline exactly as the operator would; exit 0 Ready, 1 Failed, 2 bad usage.',
  flags: {
    template: {
      type: 'string',
      value: 'T.yaml',
      description: 'the Template (required, unless --revisions holds the revision to render)',
    },
    instance: {
      type: 'string',
      value: 'I.yaml',
      description:
        'the TemplateInstance, or an object of the kind the Template publishes (required)',
    },
    objects: {
      type: 'string',
      multiple: true,
      value: 'O.yaml',
      description:
        'objects valueFrom reads (Secrets, ConfigMaps, any kind), and the producers observed reads',
    },
    crds: CRDS_FLAG,
    revisions: {
      type: 'string',
      value: 'R.yaml',
      description:
        "TemplateRevisions (kubectl get templaterevisions -o yaml); honours the instance's pin",
    },
    revision: {
      type: 'string',
      value: 'N',
      description: "render revision N from --revisions (overrides the instance's pin)",
    },
    output: {
      type: 'string',
      short: 'o',
      value: 'yaml|json',
      description: 'manifests with ownership metadata, or the status as JSON (default yaml)',
    },
  },
};

export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

function checked<T>(kind: CrdKind, file: string, value: unknown): T {
  const problems = validateAgainstCrd(kind, value);
  if (problems.length > 0)
    throw new UsageError(`${file}: invalid ${kind}: ${problems.map(formatProblem).join('; ')}`);
  return value as T;
}

function parse(argv: string[]): {
  template: string | undefined;
  instance: string;
  objects: string[];
  revisions: string | undefined;
  revision: number | undefined;
  output: 'yaml' | 'json';
  crds: string[];
} {
  const line = parseCommandLine(RENDER_COMMAND, argv);
  const [template, instance] = [stringFlag(line, 'template'), stringFlag(line, 'instance')];
  const revisions = stringFlag(line, 'revisions');
  const revision = revisionNumber('--revision', stringFlag(line, 'revision'));
  const output = stringFlag(line, 'output') ?? 'yaml';
  const usage = usageLine(RENDER_COMMAND);
  if (!instance || (!template && !revisions))
    throw new UsageError(`--instance and --template (or --revisions) are required; ${usage}`);
  if (revision !== undefined && !revisions)
    throw new UsageError(
      `--revision needs --revisions R.yaml, the TemplateRevisions to render from; ${usage}`,
    );
  if (output !== 'yaml' && output !== 'json')
    throw new UsageError(`--output must be yaml or json; ${usage}`);
  const [objects, crds] = [stringFlags(line, 'objects'), stringFlags(line, 'crds')];
  return { template, instance, objects, revisions, revision, output, crds };
}

/** A Template file, checked against the CRD schema. */
export function loadTemplate(file: string): Template {
  return checked<Template>('Template', file, readSingle(file, 'Template'));
}

/** An instance file, checked against the CRD schema, its namespace defaulted as kubectl does. */
export function loadInstance(file: string): TemplateInstance {
  return instanceOf(file, readSingle(file, 'TemplateInstance'));
}

/** A TemplateInstance read from `file`, checked against the CRD schema, namespace defaulted. */
export function instanceOf(file: string, value: unknown): TemplateInstance {
  const instance = checked<TemplateInstance>('TemplateInstance', file, value);
  const namespace = instance.metadata.namespace ?? 'default';
  return { ...instance, metadata: { ...instance.metadata, namespace } };
}

/**
 * The Template file when it is the one the instance references (a Template file without a
 * namespace is taken to be in the referenced one), else undefined: the render then fails with
 * TemplateNotFound, as the operator's would.
 */
export function referencedTemplate(
  instance: TemplateInstance,
  template: Template | undefined,
): Template | undefined {
  if (!template) return undefined;
  const ref = templateRefOf(instance);
  const namespace = template.metadata.namespace ?? ref.namespace;
  if (template.metadata.name !== ref.name || namespace !== ref.namespace) return undefined;
  return { ...template, metadata: { ...template.metadata, namespace } };
}

export interface OfflineRender {
  evaluation: InstanceEvaluation;
  ok: boolean;
  /** The conditions as the status would show them, Ready last. */
  conditions: ConditionDraft[];
}

/** One evaluation of the instance, as the operator's, against the objects of --objects files. */
export async function renderOffline(
  instance: TemplateInstance,
  choice: OfflineTemplate,
  objects: KubeObject[],
  schemas: ObjectSchemas,
): Promise<OfflineRender> {
  const namespace = objects.find(
    (o) => o.kind === 'Namespace' && o.metadata.name === instance.metadata.namespace,
  );
  const port = new MemorySource(objects);
  const evaluation = await evaluateInstance({
    instance,
    template: choice.template,
    ...(choice.missingRevision !== undefined ? { missingRevision: choice.missingRevision } : {}),
    namespaceLabels: namespace?.metadata.labels ?? {},
    port,
    schemas,
    // Offline, the live producers of observed reads are whatever --objects holds.
    observe: async (ref) => {
      const read = await port.get(ref);
      return read.ok ? read.value : undefined;
    },
  });
  const evaluated = withObservedGaps(withOfflineRevisionMessage(evaluation, choice));
  return {
    evaluation,
    ok: evaluation.ok && evaluated.ok,
    conditions: [...evaluated.conditions, readyCondition(evaluated.conditions)],
  };
}

/** The operator points at the Template's status for the kept revisions; offline, the file. */
function withOfflineRevisionMessage(
  evaluation: InstanceEvaluation,
  choice: OfflineTemplate,
): InstanceEvaluation {
  if (choice.missingMessage === undefined) return evaluation;
  const message = choice.missingMessage;
  return {
    ...evaluation,
    conditions: evaluation.conditions.map((c) =>
      c.type === InstanceConditionType.TemplateResolved && c.status === 'False'
        ? { ...c, message }
        : c,
    ),
  };
}

function templateToRender(
  instance: TemplateInstance,
  given: Template | undefined,
  revisions: RevisionsFile | undefined,
  revision: number | undefined,
): OfflineTemplate {
  const live = referencedTemplate(instance, given);
  // A --template that is not the one referenced fails the render (TemplateNotFound), rather
  // than the file's revisions being rendered in its place.
  if (given && !live) return { template: undefined };
  return chooseOfflineTemplate({
    instance,
    live,
    revisions,
    ...(revision !== undefined ? { revision: { number: revision, flag: '--revision' } } : {}),
  });
}

export async function renderCommand(argv: string[]): Promise<CommandResult> {
  const args = parse(argv);
  const given = args.template === undefined ? undefined : loadTemplate(args.template);
  const schemas = offlineSchemas(args.crds);
  const document = instanceDocument(args.instance, given);
  const instance =
    given && isTypedInstanceOf(document, given)
      ? await typedInstanceOf(args.instance, document, given, schemas)
      : instanceOf(args.instance, document);
  const revisions = args.revisions === undefined ? undefined : readRevisions(args.revisions);
  const objects = args.objects.flatMap(readObjects);
  const choice = templateToRender(instance, given, revisions, args.revision);
  const { evaluation, ok, conditions } = await renderOffline(instance, choice, objects, schemas);
  const notes = evaluation.notes.map((n) => `stencil: note: ${n}\n`).join('');
  const exitCode = ok ? 0 : 1;
  if (args.output === 'json') {
    const phase = ok ? 'Ready' : 'Failed';
    const report = {
      phase,
      // Only with --revisions, which is when the revision rendered is known.
      ...(choice.revision !== undefined ? { revision: choice.revision } : {}),
      conditions,
      resolvedParameters: evaluation.resolved?.status ?? [],
      resources: ok ? evaluation.resources : [],
      // Only when something was read: the report of a Template without observed is unchanged.
      ...(ok && evaluation.observed.some((inputs) => inputs.length > 0)
        ? { observed: observedReport(evaluation) }
        : {}),
    };
    return { exitCode, stdout: `${JSON.stringify(report, null, 2)}\n`, stderr: notes };
  }
  if (!ok) {
    const failedCondition = conditions[conditions.length - 2]!;
    return {
      exitCode,
      stdout: '',
      stderr: `${failedCondition.type}=False ${failedCondition.reason}: ${failedCondition.message}\n`,
    };
  }
  return {
    exitCode,
    stdout: revisionLine(choice, instance) + manifests(evaluation),
    stderr: notes,
  };
}

/**
 * `# revision N of Template ns/name (how it was chosen)`: a comment, so stdout stays valid
 * multi-document YAML (it belongs to the first document, as the wave comments do to theirs).
 */
function revisionLine(choice: OfflineTemplate, instance: TemplateInstance): string {
  if (choice.revision === undefined) return '';
  const ref = templateRefOf(instance);
  return `# revision ${choice.revision} of Template ${ref.namespace}/${ref.name} (${choice.chosenBy ?? ''})\n`;
}

/**
 * Offline there is no later pass in which a missing producer appears: an object whose observed
 * input is not in --objects cannot be rendered, and the render fails naming it.
 */
function withObservedGaps(evaluation: InstanceEvaluation): {
  ok: boolean;
  conditions: ConditionDraft[];
} {
  const gap = evaluation.resources.findIndex((_, i) => evaluation.waits[i] !== undefined);
  if (!evaluation.ok || gap < 0) return { ok: true, conditions: evaluation.conditions };
  const reader = evaluation.resources[gap]!;
  const input = evaluation.observed[gap]!.find((o) => o.state !== 'found')!;
  const namespace = reader.metadata.namespace ?? '';
  const found = observedProducer(input, evaluation.resources, namespace);
  const producer = `${input.apiVersion} ${describeObject(found ?? { kind: input.kind, name: input.name, namespace })}`;
  const message =
    input.state === 'missing'
      ? `${describeObject(reader)} reads ${input.jsonPath} of ${producer} with observed, but ${producer} is not in the --objects files; add it (kubectl get -o yaml) to render ${describeObject(reader)}`
      : `${describeObject(reader)} reads ${input.jsonPath} of ${producer} with observed, but the JSONPath ${input.state === 'overlimit' ? OVER_LIMIT : 'matched nothing'} in the ${producer} of the --objects files`;
  const conditions = evaluation.conditions.filter((c) => c.type !== InstanceConditionType.Rendered);
  conditions.push(
    draft(
      InstanceConditionType.Rendered,
      false,
      InstanceReason.TemplateExecutionFailed,
      evaluation.redactor.redact(message),
    ),
  );
  return { ok: false, conditions };
}

/** Which object read what with `observed`, all of it from the --objects files. */
function observedReport(
  evaluation: InstanceEvaluation,
): { resource: string; reads: string; jsonPath: string; from: '--objects' }[] {
  return evaluation.resources.flatMap((reader, i) =>
    (evaluation.observed[i] ?? []).map((input) => ({
      resource: `${reader.apiVersion} ${describeObject(reader)}`,
      reads: `${input.apiVersion} ${describeObject(observedProducer(input, evaluation.resources, reader.metadata.namespace ?? '') ?? input)}`,
      jsonPath: input.jsonPath,
      from: '--objects' as const,
    })),
  );
}

/** A `# wave N` comment on each document when there are several waves, and its observed inputs. */
function annotations(
  object: KubeObject,
  inputs: ObservedInput[],
  all: KubeObject[],
  waves: boolean,
): string {
  const lines = waves ? [`# wave ${waveOf(object)}`] : [];
  for (const input of inputs)
    lines.push(
      `# observed from --objects: ${input.jsonPath} of ${input.apiVersion} ${describeObject(observedProducer(input, all, object.metadata.namespace ?? '') ?? input)}`,
    );
  return lines.map((line) => `${line}\n`).join('');
}

function manifests(evaluation: InstanceEvaluation): string {
  const { resources, observed } = evaluation;
  const waves = new Set(resources.map(waveOf)).size > 1;
  return resources
    .map(
      (r, i) =>
        `${annotations(r, observed[i] ?? [], resources, waves)}${stringify(r, { version: '1.1' })}`,
    )
    .join('---\n');
}
