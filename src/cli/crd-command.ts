// `stencil crd --template T.yaml`: the CustomResourceDefinition the operator would keep for the
// kind the Template publishes (ADR 0032), and with --rbac its edit and view ClusterRoles; the
// same pure functions the operator applies. With --api-groups, the platform's allowance is
// checked as the operator checks it.
import { stringify } from 'yaml';
import {
  parseCommandLine,
  stringFlag,
  usageLine,
  UsageError,
  type CommandSpec,
} from '../command-line.ts';
import { formatProblem } from '../engine/shared/problem.ts';
import { checkApi } from '../engine/typed-api/api-checks.ts';
import { parseApiAllowance, type ApiAllowance } from '../engine/typed-api/api-names.ts';
import { publishedRoles } from '../engine/typed-api/api-roles.ts';
import { loadTemplate, type CommandResult } from './render-command.ts';

export const API_GROUPS_FLAG = {
  type: 'string',
  value: 'NS=GROUP,...;...',
  description:
    "the operator's --api-groups: which namespaces' Templates may publish which groups (unchecked if absent)",
} as const;

export const CRD_COMMAND: CommandSpec = {
  name: 'crd',
  synopsis: '--template T.yaml [--rbac] [--api-groups NS=GROUP,...] [--output yaml|json]',
  summary:
    "Prints the CRD of the kind a Template publishes (spec.api), as the operator keeps it; exit 0 printed, 1 the Template's api is refused, 2 bad usage.",
  flags: {
    template: { type: 'string', value: 'T.yaml', description: 'the Template (required)' },
    rbac: { type: 'boolean', description: 'also print the edit and view ClusterRoles of the kind' },
    'api-groups': API_GROUPS_FLAG,
    output: { type: 'string', short: 'o', value: 'yaml|json', description: 'default yaml' },
  },
};

/** The allowance of `--api-groups`, or undefined when it was not given. */
export function allowanceFlag(text: string | undefined): ApiAllowance | undefined {
  if (text === undefined) return undefined;
  const parsed = parseApiAllowance(text);
  if (!parsed.ok)
    throw new UsageError(`--api-groups: ${parsed.problems.map((p) => p.message).join('; ')}`);
  return parsed.value;
}

export function crdCommand(argv: string[]): Promise<CommandResult> {
  return Promise.resolve(crdResult(argv));
}

function crdResult(argv: string[]): CommandResult {
  const line = parseCommandLine(CRD_COMMAND, argv);
  const file = stringFlag(line, 'template');
  if (!file) throw new UsageError(`--template is required; ${usageLine(CRD_COMMAND)}`);
  const output = stringFlag(line, 'output') ?? 'yaml';
  if (output !== 'yaml' && output !== 'json')
    throw new UsageError(`--output must be yaml or json; ${usageLine(CRD_COMMAND)}`);
  const allowance = allowanceFlag(stringFlag(line, 'api-groups'));
  const template = loadTemplate(file);
  if (!template.spec.api)
    return {
      exitCode: 1,
      stdout: '',
      stderr: `${file}: the Template publishes no kind (no spec.api)\n`,
    };
  const { problems, crd } = checkApi(template, allowance);
  if (!crd) {
    const lines = problems.map((p) => `${file}: ${p.reason}: ${formatProblem(p)}\n`);
    return { exitCode: 1, stdout: '', stderr: lines.join('') };
  }
  const objects = [crd, ...(line.values.rbac === true ? publishedRoles(template) : [])];
  const stdout =
    output === 'json'
      ? `${JSON.stringify(objects.length === 1 ? objects[0] : { apiVersion: 'v1', kind: 'List', items: objects }, null, 2)}\n`
      : objects.map((o) => stringify(o, { lineWidth: 0 })).join('---\n');
  return { exitCode: 0, stdout, stderr: '' };
}
