// Static check of the `stencil.dev/ready-when` annotations a Template body writes: every literal
// expression must be valid CEL, found when the Template is validated (its Valid condition and
// `stencil validate`), before any instance renders it. An expression built with Handlebars is
// checked when it is evaluated (its object's health is then Unknown with the parser's message).
import { parse } from 'yaml';
import { TemplateReason } from '../../api/condition.ts';
import { ANNOTATION_READY_WHEN } from '../../api/well-known.ts';
import { compileCel } from '../crd-schema/cel.ts';
import type { Problem } from '../shared/problem.ts';
import { KUBERNETES_YAML } from '../shared/kube-yaml.ts';

const ANNOTATION_LINE = new RegExp(
  `^\\s*(["']?)${ANNOTATION_READY_WHEN.replace(/[./]/g, '\\$&')}\\1\\s*:\\s*(.*)$`,
);

function problem(line: number, message: string): Problem {
  return {
    path: 'spec.handlebars',
    reason: TemplateReason.ValidationFailed,
    message: `line ${line}: ${message}`,
  };
}

/** Problems of the literal ready-when expressions in `body`, with their lines. */
export function readyWhenProblems(body: string): Problem[] {
  const problems: Problem[] = [];
  for (const [index, text] of body.split('\n').entries()) {
    const match = ANNOTATION_LINE.exec(text);
    const raw = match?.[2]?.trim();
    if (!raw || raw.includes('{{')) continue;
    let expression: unknown;
    try {
      expression = parse(raw, KUBERNETES_YAML);
    } catch {
      continue; // not a plain scalar on this line (a block scalar, say): the render checks it
    }
    if (typeof expression !== 'string') {
      problems.push(
        problem(index + 1, `${ANNOTATION_READY_WHEN} must be a CEL expression in a string`),
      );
      continue;
    }
    try {
      compileCel(expression);
    } catch (error) {
      const reason = (error as Error).message.split('\n')[0] ?? '';
      problems.push(
        problem(index + 1, `${ANNOTATION_READY_WHEN} "${expression}" is not valid CEL: ${reason}`),
      );
    }
  }
  return problems;
}
