// `stencil render`: renders an instance offline exactly as the operator would (the same
// evaluateInstance path), resolving valueFrom and `observed` against the objects in --objects
// files, and showing the waves and what `observed` read.
import { stringify } from 'yaml';
import type { Template } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import { InstanceConditionType, InstanceReason } from '../api/condition.ts';
import type { KubeObject } from '../api/object-meta.ts';
import { draft, readyCondition, type ConditionDraft } from '../engine/conditions.ts';
import {
  evaluateInstance,
  templateRefOf,
  type InstanceEvaluation,
} from '../engine/instance-evaluation.ts';
import { describeObject, waveOf } from '../engine/inventory.ts';
import { observedProducer, type ObservedInput } from '../engine/observed.ts';
import { MemorySource } from '../engine/memory-source.ts';
import { formatProblem } from '../engine/problem.ts';
import { validateAgainstCrd, type CrdKind } from '../engine/schema-validation.ts';
import {
  parseCommandLine,
  stringFlag,
  stringFlags,
  usageLine,
  type CommandSpec,
} from './command-line.ts';
import { readObjects, readSingle, UsageError } from './manifest-files.ts';

export const RENDER_COMMAND: CommandSpec = {
  name: 'render',
  synopsis: '--template T.yaml --instance I.yaml [--objects O.yaml]... [--output yaml|json]',
  summary:
    'Renders a TemplateInstance offline exactly as the operator would; exit 0 Ready, 1 Failed, 2 bad usage.',
  flags: {
    template: { type: 'string', value: 'T.yaml', description: 'the Template (required)' },
    instance: { type: 'string', value: 'I.yaml', description: 'the TemplateInstance (required)' },
    objects: {
      type: 'string',
      multiple: true,
      value: 'O.yaml',
      description:
        'objects valueFrom reads (Secrets, ConfigMaps, any kind), and the producers observed reads',
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
  template: string;
  instance: string;
  objects: string[];
  output: 'yaml' | 'json';
} {
  const line = parseCommandLine(RENDER_COMMAND, argv);
  const [template, instance] = [stringFlag(line, 'template'), stringFlag(line, 'instance')];
  const output = stringFlag(line, 'output') ?? 'yaml';
  const usage = usageLine(RENDER_COMMAND);
  if (!template || !instance)
    throw new UsageError(`--template and --instance are required; ${usage}`);
  if (output !== 'yaml' && output !== 'json')
    throw new UsageError(`--output must be yaml or json; ${usage}`);
  return { template, instance, objects: stringFlags(line, 'objects'), output };
}

function withDefaults(
  instance: TemplateInstance,
  template: Template,
): { instance: TemplateInstance; template: Template } {
  const namespace = instance.metadata.namespace ?? 'default';
  const fixedInstance = { ...instance, metadata: { ...instance.metadata, namespace } };
  const ref = templateRefOf(fixedInstance);
  const fixedTemplate = {
    ...template,
    metadata: { ...template.metadata, namespace: template.metadata.namespace ?? ref.namespace },
  };
  return { instance: fixedInstance, template: fixedTemplate };
}

export async function renderCommand(argv: string[]): Promise<CommandResult> {
  const args = parse(argv);
  const template = checked<Template>(
    'Template',
    args.template,
    readSingle(args.template, 'Template'),
  );
  const loaded = withDefaults(
    checked<TemplateInstance>(
      'TemplateInstance',
      args.instance,
      readSingle(args.instance, 'TemplateInstance'),
    ),
    template,
  );
  const objects = args.objects.flatMap(readObjects);
  const { instance } = loaded;
  const ref = templateRefOf(instance);
  const matches =
    loaded.template.metadata.name === ref.name &&
    loaded.template.metadata.namespace === ref.namespace;
  const namespace = objects.find(
    (o) => o.kind === 'Namespace' && o.metadata.name === instance.metadata.namespace,
  );
  const port = new MemorySource(objects);
  const evaluation = await evaluateInstance({
    instance,
    template: matches ? loaded.template : undefined,
    namespaceLabels: namespace?.metadata.labels ?? {},
    port,
    // Offline, the live producers of observed reads are whatever --objects holds.
    observe: async (ref) => {
      const read = await port.get(ref);
      return read.ok ? read.value : undefined;
    },
  });
  const evaluated = withObservedGaps(evaluation);
  const conditions = [...evaluated.conditions, readyCondition(evaluated.conditions)];
  const ok = evaluation.ok && evaluated.ok;
  const exitCode = ok ? 0 : 1;
  if (args.output === 'json') {
    const phase = ok ? 'Ready' : 'Failed';
    const report = {
      phase,
      conditions,
      resolvedParameters: evaluation.resolved?.status ?? [],
      resources: ok ? evaluation.resources : [],
      // Only when something was read: the report of a Template without observed is unchanged.
      ...(ok && evaluation.observed.some((inputs) => inputs.length > 0)
        ? { observed: observedReport(evaluation) }
        : {}),
    };
    return { exitCode, stdout: `${JSON.stringify(report, null, 2)}\n`, stderr: '' };
  }
  if (!ok) {
    const failedCondition = conditions[conditions.length - 2]!;
    return {
      exitCode,
      stdout: '',
      stderr: `${failedCondition.type}=False ${failedCondition.reason}: ${failedCondition.message}\n`,
    };
  }
  return { exitCode, stdout: manifests(evaluation), stderr: '' };
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
      : `${describeObject(reader)} reads ${input.jsonPath} of ${producer} with observed, but the JSONPath matched nothing in the ${producer} of the --objects files`;
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
