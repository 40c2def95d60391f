// `stencil diff`: what a Template change would do to one instance, offline. Both sides are
// rendered exactly as `stencil render` renders them (the operator's evaluateInstance path,
// valueFrom read from --objects), then compared object by object and field by field. Secret
// values never show: every text goes through both renders' redactors, and a Secret's data
// values are hidden whatever made them.
import type { JsonValue } from '../api/object-meta.ts';
import type { Template } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import { templateRefOf } from '../engine/shared/template-ref.ts';
import { diffManifests, isEmptyDiff, type ManifestDiff } from '../engine/sync/manifest-diff.ts';
import {
  parseCommandLine,
  stringFlag,
  stringFlags,
  usageLine,
  UsageError,
  type CommandLine,
  type CommandSpec,
} from '../command-line.ts';
import { readObjects } from './manifest-files.ts';
import { CRDS_FLAG, offlineSchemas } from './offline-schemas.ts';
import type { ObjectSchemas } from '../engine/object-schema/object-schema.ts';
import { diffInstances } from './diff-instances.ts';
import {
  NotReferenced,
  redactValue,
  renderSide,
  type DiffTarget,
  type SideChoice,
  type Sides,
} from './diff-rendering.ts';
import {
  loadInstance,
  loadTemplate,
  referencedTemplate,
  type CommandResult,
} from './render-command.ts';
import {
  chooseOfflineTemplate,
  readRevisions,
  revisionNumber,
  type RevisionsFile,
} from './revisions-file.ts';

export const DIFF_COMMAND: CommandSpec = {
  name: 'diff',
  synopsis:
    '(--instance I.yaml | --instances DIR) (--from T.yaml | --from-revision N) (--to T.yaml | --to-revision N) [--template T.yaml] [--revisions R.yaml] [--objects O.yaml]... [--crds CRDS.yaml]... [--output text|json]',
  summary:
    'Prints what a Template change does to an instance: objects added, changed (field by field) and pruned; exit 0 no difference, 1 differences, 2 trouble.',
  flags: {
    instance: { type: 'string', value: 'I.yaml', description: 'the TemplateInstance' },
    instances: {
      type: 'string',
      value: 'DIR',
      description:
        'or: every TemplateInstance of the Template in the YAML files of DIR (a preflight of the change: one line each, then the counts)',
    },
    from: { type: 'string', value: 'T.yaml', description: 'the Template as it is now' },
    'from-revision': {
      type: 'string',
      value: 'N',
      description: 'or: revision N of --revisions as it is now',
    },
    to: { type: 'string', value: 'T.yaml', description: 'the Template as it would be' },
    'to-revision': {
      type: 'string',
      value: 'N',
      description: 'or: revision N of --revisions as it would be',
    },
    template: {
      type: 'string',
      value: 'T.yaml',
      description:
        "the live Template: namespace and policy for a side given as a revision (default: the revision's own)",
    },
    revisions: {
      type: 'string',
      value: 'R.yaml',
      description: 'TemplateRevisions (kubectl get templaterevisions -o yaml) for --*-revision',
    },
    objects: {
      type: 'string',
      multiple: true,
      value: 'O.yaml',
      description: 'objects valueFrom and observed read, as for stencil render',
    },
    crds: CRDS_FLAG,
    output: {
      type: 'string',
      short: 'o',
      value: 'text|json',
      description: 'a readable listing, or the same as JSON (default text)',
    },
  },
  notes: [
    'Exit 2 also when a side does not render; the message names the side and the failing condition.',
    'With --instances: exit 0 when no instance changes, 1 when some change and all render with --to, 2 when one does not.',
    "Secret-backed values show as [redacted: parameters.<name>], a Secret's data as [redacted: Secret data].",
  ],
};

type SideName = 'from' | 'to';

interface Inputs extends DiffTarget {
  objects: string[];
  output: 'text' | 'json';
  schemas: ObjectSchemas;
}

interface SideFlags {
  name: SideName;
  file?: string;
  revision?: number;
}

/** One of --NAME and --NAME-revision, checked before any file is read. */
function sideFlags(name: SideName, line: CommandLine): SideFlags {
  const file = stringFlag(line, name);
  const revision = revisionNumber(`--${name}-revision`, stringFlag(line, `${name}-revision`));
  if ((file === undefined) === (revision === undefined))
    throw new UsageError(
      `give one of --${name} T.yaml or --${name}-revision N; ${usageLine(DIFF_COMMAND)}`,
    );
  if (revision !== undefined && stringFlag(line, 'revisions') === undefined)
    throw new UsageError(
      `--${name}-revision needs --revisions R.yaml, the TemplateRevisions to render from; ${usageLine(DIFF_COMMAND)}`,
    );
  return {
    name,
    ...(file !== undefined ? { file } : {}),
    ...(revision !== undefined ? { revision } : {}),
  };
}

function side(
  flags: SideFlags,
  instance: TemplateInstance,
  live: string | undefined,
  revisions: RevisionsFile | undefined,
): SideChoice {
  const { name, file, revision } = flags;
  const ref = templateRefOf(instance);
  const referenced = (flag: string, path: string): Template => {
    const template = referencedTemplate(instance, loadTemplate(path));
    if (!template)
      throw new NotReferenced(
        `${flag} ${path}: not the Template the instance references (${ref.namespace}/${ref.name})`,
      );
    return template;
  };
  if (file !== undefined)
    return { source: `--${name} ${file}`, choice: { template: referenced(`--${name}`, file) } };
  const choice = chooseOfflineTemplate({
    instance,
    live: live === undefined ? undefined : referenced('--template', live),
    revisions,
    revision: { number: revision!, flag: `--${name}-revision` },
  });
  return { source: `--${name}-revision ${revision} (${revisions!.file})`, choice };
}

interface Parsed {
  /** --instance's file, or undefined with --instances. */
  instanceFile?: string;
  instancesDir?: string;
  sides: Sides;
  objects: string[];
  output: 'text' | 'json';
  schemas: ObjectSchemas;
}

function parse(argv: string[]): Parsed {
  const line = parseCommandLine(DIFF_COMMAND, argv);
  const usage = usageLine(DIFF_COMMAND);
  const instanceFile = stringFlag(line, 'instance');
  const instancesDir = stringFlag(line, 'instances');
  if ((instanceFile === undefined) === (instancesDir === undefined))
    throw new UsageError(`give one of --instance I.yaml or --instances DIR; ${usage}`);
  const output = stringFlag(line, 'output') ?? 'text';
  if (output !== 'text' && output !== 'json')
    throw new UsageError(`--output must be text or json; ${usage}`);
  const flags = { from: sideFlags('from', line), to: sideFlags('to', line) };
  const revisionsFile = stringFlag(line, 'revisions');
  const revisions = revisionsFile === undefined ? undefined : readRevisions(revisionsFile);
  const live = stringFlag(line, 'template');
  return {
    ...(instanceFile !== undefined ? { instanceFile } : {}),
    ...(instancesDir !== undefined ? { instancesDir } : {}),
    sides: (instance) => ({
      instance,
      from: side(flags.from, instance, live, revisions),
      to: side(flags.to, instance, live, revisions),
    }),
    objects: stringFlags(line, 'objects'),
    output,
    schemas: offlineSchemas(stringFlags(line, 'crds')),
  };
}

function shown(value: JsonValue | undefined): string {
  return value === undefined ? '(absent)' : JSON.stringify(value);
}

function textReport(instance: string, from: string, to: string, diff: ManifestDiff): string {
  const lines = [`TemplateInstance ${instance}: ${from} → ${to}`];
  if (diff.added.length > 0)
    lines.push(`added (${diff.added.length}):`, ...diff.added.map((r) => `  + ${r}`));
  if (diff.changed.length > 0) {
    lines.push(`changed (${diff.changed.length}):`);
    for (const { resource, changes } of diff.changed) {
      lines.push(`  ~ ${resource}`);
      for (const c of changes) lines.push(`      ${c.path}: ${shown(c.from)} → ${shown(c.to)}`);
    }
  }
  if (diff.pruned.length > 0)
    lines.push(`pruned (${diff.pruned.length}):`, ...diff.pruned.map((r) => `  - ${r}`));
  return `${lines.join('\n')}\n`;
}

export async function diffCommand(argv: string[]): Promise<CommandResult> {
  const parsed = parse(argv);
  const objects = parsed.objects.flatMap(readObjects);
  if (parsed.instancesDir !== undefined)
    return diffInstances(parsed.instancesDir, parsed.sides, objects, parsed);
  const inputs: Inputs = { ...parsed, ...parsed.sides(loadInstance(parsed.instanceFile!)) };
  const { instance } = inputs;
  const renders = {
    from: await renderSide(inputs, 'from', objects, inputs.schemas),
    to: await renderSide(inputs, 'to', objects, inputs.schemas),
  };
  const redactors = [renders.from.evaluation.redactor, renders.to.evaluation.redactor];
  for (const name of ['from', 'to'] as const) {
    const { ok, conditions } = renders[name];
    if (ok) continue;
    // The conditions went through their own render's redactor; the other's may know more.
    const failure = conditions[conditions.length - 2]!;
    const message = redactValue(
      `${inputs[name].source} does not render TemplateInstance ${instance.metadata.namespace}/${instance.metadata.name}: ${failure.type}=False ${failure.reason}: ${failure.message}`,
      redactors,
    ) as string;
    return { exitCode: 2, stdout: '', stderr: `stencil: ${message}\n` };
  }
  const diff = redactValue(
    diffManifests(
      renders.from.evaluation.resources,
      renders.to.evaluation.resources,
    ) as unknown as JsonValue,
    redactors,
  ) as unknown as ManifestDiff;
  const exitCode = isEmptyDiff(diff) ? 0 : 1;
  const key = `${instance.metadata.namespace}/${instance.metadata.name}`;
  const pin = instance.spec.templateRef.revision;
  // Two Template files say nothing about a pinned instance: the operator keeps it on its pin.
  const stderr =
    pin !== undefined && inputs.from.choice.revision === undefined
      ? `stencil: note: TemplateInstance ${key} pins revision ${pin}; a Template change does not reach it until the pin moves (compare with --from-revision ${pin})\n`
      : '';
  if (inputs.output === 'json') {
    const sideReport = (s: SideChoice): { source: string; revision?: number } => ({
      source: s.source,
      ...(s.choice.revision !== undefined ? { revision: s.choice.revision } : {}),
    });
    const report = {
      instance: key,
      from: sideReport(inputs.from),
      to: sideReport(inputs.to),
      ...diff,
    };
    return { exitCode, stdout: `${JSON.stringify(report, null, 2)}\n`, stderr };
  }
  const stdout = isEmptyDiff(diff)
    ? `TemplateInstance ${key}: no difference: ${inputs.from.source} and ${inputs.to.source} render the same ${renders.to.evaluation.resources.length} resource(s)\n`
    : textReport(key, inputs.from.source, inputs.to.source, diff);
  return { exitCode, stdout, stderr };
}
