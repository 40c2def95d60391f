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
  stringFlag,
  stringFlags,
  usageLine,
  UsageError,
  type CommandSpec,
} from '../command-line.ts';
import { kindOf, readDocuments, type LoadedDocument } from './manifest-files.ts';
import type { CommandResult } from './render-command.ts';
import { CRDS_FLAG, offlineSchemas } from './offline-schemas.ts';
import type { ObjectSchemas, OfflineSchemas } from '../engine/object-schema/object-schema.ts';
import { apiProblems } from '../engine/typed-api/api-checks.ts';
import type { ApiAllowance } from '../engine/typed-api/api-names.ts';
import { allowanceFlag, API_GROUPS_FLAG } from './crd-command.ts';
import { isTypedInstanceOf, typedInstanceOf } from './typed-instance.ts';

export const VALIDATE_COMMAND: CommandSpec = {
  name: 'validate',
  synopsis: '[--crds CRDS.yaml]... FILE...',
  summary:
    "Checks the Templates and TemplateInstances (and objects of a kind a Template's spec.api publishes) in FILE... as the operator would; exit 0 valid, 1 not, 2 bad usage.",
  flags: { crds: CRDS_FLAG, 'api-groups': API_GROUPS_FLAG },
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
  allowance: ApiAllowance | undefined,
): Promise<{ lines: string[]; ok: boolean }> {
  const evaluation = await evaluateTemplateChecked(doc.value, schemas);
  // The published kind's checks, as the operator makes them (the allowance only with --api-groups).
  const problems =
    evaluation.problems.length > 0 || evaluation.phase === 'Invalid'
      ? evaluation.problems
      : apiProblems(doc.value as Template, allowance);
  if (problems.length > 0) return { lines: problemLines(prefix, problems), ok: false };
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

/** An object of a kind a Template among the files publishes: checked as at admission, then as an instance. */
async function typedInstanceLines(
  doc: LoadedDocument,
  prefix: string,
  template: Template,
  schemas: OfflineSchemas,
): Promise<{ lines: string[]; ok: boolean }> {
  let instance: TemplateInstance;
  try {
    instance = await typedInstanceOf(doc.file, doc.value, template, schemas);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return { lines: [`${prefix}: ${error.message.replace(`${doc.file}: `, '')}`], ok: false };
  }
  const problems = checkInstanceStatically(template, instance);
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

/** One document's lines: a Stencil kind checked, a typed instance checked, anything else skipped. */
async function documentLines(
  doc: LoadedDocument,
  context: {
    schemas: OfflineSchemas;
    allowance: ApiAllowance | undefined;
    templates: Map<string, Template>;
  },
): Promise<{ lines: string[]; ok: boolean; skipped?: true }> {
  const { schemas, allowance, templates } = context;
  const kind = kindOf(doc.value);
  const prefix = `${doc.file}#${doc.index} ${kind ?? '(no kind)'} ${nameOf(doc.value)}`;
  if (kind === 'TemplateInstanceSet') return setLines(doc, prefix);
  const publisher = [...templates.values()].find((t) => isTypedInstanceOf(doc.value, t));
  if (publisher) return typedInstanceLines(doc, prefix, publisher, schemas);
  if (kind === 'Template') return templateLines(doc, prefix, schemas, allowance);
  if (kind === 'TemplateInstance') return instanceLines(doc, prefix, templates);
  return { lines: [`${prefix}: skipped (not a Stencil resource)`], ok: true, skipped: true };
}

export async function validateCommand(argv: string[]): Promise<CommandResult> {
  const line = parseCommandLine(VALIDATE_COMMAND, argv);
  const files = line.positionals;
  if (files.length === 0) throw new UsageError(`no FILE given; ${usageLine(VALIDATE_COMMAND)}`);
  const schemas = offlineSchemas(stringFlags(line, 'crds'));
  const allowance = allowanceFlag(stringFlag(line, 'api-groups'));
  const docs = files.flatMap(readDocuments);
  const templates = templatesByName(docs);
  const out: string[] = [];
  const err: string[] = [];
  let ok = true;
  for (const doc of docs) {
    const result = await documentLines(doc, { schemas, allowance, templates });
    (result.ok && !result.skipped ? out : err).push(...result.lines);
    ok &&= result.ok;
  }
  const lines = (list: string[]): string => list.map((l) => `${l}\n`).join('');
  return { exitCode: ok ? 0 : 1, stdout: lines(out), stderr: lines(err) };
}
