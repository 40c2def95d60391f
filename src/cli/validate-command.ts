// `stencil validate FILE...`: the static checks of Templates (schema, Handlebars, references,
// literal defaults, dry run) and of instances (schema, and against a Template in the same files).
import type { Template } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import { checkInstanceStatically } from '../engine/parameters/instance-checks.ts';
import { templateRefOf } from '../engine/shared/template-ref.ts';
import { formatProblem, type Problem } from '../engine/shared/problem.ts';
import { validateAgainstCrd } from '../engine/crd-schema/schema-validation.ts';
import { evaluateTemplateChecked } from '../engine/evaluation/template-evaluation.ts';
import {
  parseCommandLine,
  stringFlags,
  usageLine,
  UsageError,
  type CommandSpec,
} from '../command-line.ts';
import { kindOf, readDocuments, type LoadedDocument } from './manifest-files.ts';
import type { CommandResult } from './render-command.ts';
import { CRDS_FLAG, offlineSchemas } from './offline-schemas.ts';
import type { ObjectSchemas } from '../engine/object-schema/object-schema.ts';

export const VALIDATE_COMMAND: CommandSpec = {
  name: 'validate',
  synopsis: '[--crds CRDS.yaml]... FILE...',
  summary:
    'Checks the Templates and TemplateInstances in FILE... as the operator would; exit 0 valid, 1 not, 2 bad usage.',
  flags: { crds: CRDS_FLAG },
  positionals: {
    value: 'FILE...',
    description: 'YAML files of Templates and TemplateInstances (other kinds are skipped)',
  },
};

function nameOf(value: unknown): string {
  const metadata = (value as { metadata?: { name?: unknown; namespace?: unknown } }).metadata;
  const name = typeof metadata?.name === 'string' ? metadata.name : '(unnamed)';
  return typeof metadata?.namespace === 'string' ? `${metadata.namespace}/${name}` : name;
}

function problemLines(prefix: string, problems: Problem[]): string[] {
  return problems.map((p) => `${prefix}: ${p.reason}: ${formatProblem(p)}`);
}

async function templateLines(
  doc: LoadedDocument,
  prefix: string,
  schemas: ObjectSchemas,
): Promise<{ lines: string[]; ok: boolean }> {
  const evaluation = await evaluateTemplateChecked(doc.value, schemas);
  if (evaluation.problems.length > 0)
    return { lines: problemLines(prefix, evaluation.problems), ok: false };
  const dry = evaluation.conditions.find((c) => c.type === 'DryRunRendered');
  if (evaluation.phase !== 'Valid')
    return { lines: [`${prefix}: ${dry?.reason ?? ''}: ${dry?.message ?? ''}`], ok: false };
  return { lines: [`${prefix}: valid (${dry?.reason ?? ''}: ${dry?.message ?? ''})`], ok: true };
}

function instanceLines(
  doc: LoadedDocument,
  prefix: string,
  templates: Map<string, Template>,
): { lines: string[]; ok: boolean } {
  const schema = validateAgainstCrd('TemplateInstance', doc.value);
  if (schema.length > 0) return { lines: problemLines(prefix, schema), ok: false };
  const instance = doc.value as TemplateInstance;
  const withNamespace = {
    ...instance,
    metadata: { ...instance.metadata, namespace: instance.metadata.namespace ?? 'default' },
  };
  const ref = templateRefOf(withNamespace);
  const template = templates.get(`${ref.namespace}/${ref.name}`) ?? templates.get(`*/${ref.name}`);
  if (!template)
    return {
      lines: [
        `${prefix}: valid (schema only; Template ${ref.namespace}/${ref.name} is not among the files)`,
      ],
      ok: true,
    };
  const problems = checkInstanceStatically(template, withNamespace);
  if (problems.length > 0) return { lines: problemLines(prefix, problems), ok: false };
  return { lines: [`${prefix}: valid against Template ${nameOf(template)}`], ok: true };
}

/** A TemplateInstanceSet: its schema only (what it stamps depends on the cluster's namespaces). */
function setLines(doc: LoadedDocument, prefix: string): { lines: string[]; ok: boolean } {
  const problems = validateAgainstCrd('TemplateInstanceSet', doc.value);
  if (problems.length > 0) return { lines: problemLines(prefix, problems), ok: false };
  return { lines: [`${prefix}: valid (schema only)`], ok: true };
}

function templatesByName(docs: LoadedDocument[]): Map<string, Template> {
  const templates = new Map<string, Template>();
  for (const d of docs.filter((doc) => kindOf(doc.value) === 'Template')) {
    const t = d.value as Template;
    templates.set(`${t.metadata?.namespace ?? '*'}/${t.metadata?.name ?? ''}`, t);
  }
  return templates;
}

export async function validateCommand(argv: string[]): Promise<CommandResult> {
  const line = parseCommandLine(VALIDATE_COMMAND, argv);
  const files = line.positionals;
  if (files.length === 0) throw new UsageError(`no FILE given; ${usageLine(VALIDATE_COMMAND)}`);
  const schemas = offlineSchemas(stringFlags(line, 'crds'));
  const docs = files.flatMap(readDocuments);
  const templates = templatesByName(docs);
  const out: string[] = [];
  const err: string[] = [];
  let ok = true;
  for (const doc of docs) {
    const kind = kindOf(doc.value);
    const prefix = `${doc.file}#${doc.index} ${kind ?? '(no kind)'} ${nameOf(doc.value)}`;
    if (kind === 'TemplateInstanceSet') {
      const result = setLines(doc, prefix);
      (result.ok ? out : err).push(...result.lines);
      ok &&= result.ok;
      continue;
    }
    if (kind !== 'Template' && kind !== 'TemplateInstance') {
      err.push(`${prefix}: skipped (not a Stencil resource)`);
      continue;
    }
    const result =
      kind === 'Template'
        ? await templateLines(doc, prefix, schemas)
        : instanceLines(doc, prefix, templates);
    (result.ok ? out : err).push(...result.lines);
    ok &&= result.ok;
  }
  const lines = (list: string[]): string => list.map((l) => `${l}\n`).join('');
  return { exitCode: ok ? 0 : 1, stdout: lines(out), stderr: lines(err) };
}
