// The TemplateRevisions of a `--revisions` file (several documents, a List, or the output of
// `kubectl get templaterevisions -o yaml`), and which Template an instance renders offline from
// them: the operator's own choice (chooseContent, docs/adr/0012), without a cluster.
import type { Template, TemplateRevision } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import { API_VERSION, TEMPLATE_KIND, TEMPLATE_REVISION_KIND } from '../api/well-known.ts';
import { templateRefOf } from '../engine/shared/template-ref.ts';
import { formatProblem, type Problem } from '../engine/shared/problem.ts';
import { templateOfRevision } from '../engine/releases/revisions.ts';
import { chooseContent, type ContentChoice } from '../engine/releases/content-choice.ts';
import { validateAgainstCrd } from '../engine/crd-schema/schema-validation.ts';
import { UsageError } from '../command-line.ts';
import { kindOf, readDocuments } from './manifest-files.ts';

export interface RevisionsFile {
  file: string;
  revisions: TemplateRevision[];
}

function itemsOf(value: unknown): unknown[] | undefined {
  const items = (value as { items?: unknown }).items;
  return kindOf(value)?.endsWith('List') && Array.isArray(items) ? items : undefined;
}

function problemText(problems: Problem[]): string {
  return problems.map(formatProblem).join('; ');
}

/** Checks one revision as the API server would, and its content as the Template CRD would. */
function checkedRevision(file: string, where: string, value: unknown): TemplateRevision {
  const kind = kindOf(value);
  if (kind !== TEMPLATE_REVISION_KIND)
    throw new UsageError(
      `--revisions ${file}: ${where} is ${kind ? `a ${kind}` : 'not a Kubernetes object'}, not a TemplateRevision`,
    );
  const problems = validateAgainstCrd('TemplateRevision', value);
  if (problems.length > 0)
    throw new UsageError(
      `--revisions ${file}: ${where}: invalid TemplateRevision: ${problemText(problems)}`,
    );
  const revision = value as TemplateRevision;
  // The revision CRD keeps `content` open (the Template's schema checked it when it was set); a
  // hand-edited file gets no such check, and a malformed content would fail deep in the render.
  const asTemplate = {
    apiVersion: API_VERSION,
    kind: TEMPLATE_KIND,
    metadata: { name: revision.spec.template },
    spec: revision.spec.content,
  };
  const contentProblems = validateAgainstCrd('Template', asTemplate).map((p) => ({
    ...p,
    path: p.path.replace(/^spec\b/, 'spec.content'),
  }));
  if (contentProblems.length > 0)
    throw new UsageError(
      `--revisions ${file}: ${where}: invalid TemplateRevision: ${problemText(contentProblems)}`,
    );
  return revision;
}

/** Reads every TemplateRevision of `file`; any other kind is refused, naming its document. */
export function readRevisions(file: string): RevisionsFile {
  const revisions: TemplateRevision[] = [];
  for (const doc of readDocuments(file)) {
    const items = itemsOf(doc.value);
    if (!items) revisions.push(checkedRevision(file, `document ${doc.index}`, doc.value));
    else
      items.forEach((item, i) =>
        revisions.push(checkedRevision(file, `document ${doc.index}, items[${i}]`, item)),
      );
  }
  return { file, revisions };
}

/** The revisions of one Template in the file, by number; a number given twice is refused. */
function revisionsOf(
  revisions: RevisionsFile,
  ref: { name: string; namespace: string },
): Map<number, TemplateRevision> {
  const byNumber = new Map<number, TemplateRevision>();
  for (const r of revisions.revisions) {
    // A revision without a namespace (a hand-written file) belongs to the Template named.
    if (r.spec.template !== ref.name || (r.metadata.namespace ?? ref.namespace) !== ref.namespace)
      continue;
    if (byNumber.has(r.spec.revision))
      throw new UsageError(
        `--revisions ${revisions.file}: revision ${r.spec.revision} of Template ${ref.namespace}/${ref.name} appears twice`,
      );
    byNumber.set(r.spec.revision, r);
  }
  return byNumber;
}

/** `it holds revisions 1, 2, 3 of Template ns/name`, or what else it holds. */
export function heldRevisions(
  revisions: RevisionsFile,
  ref: { name: string; namespace: string },
): string {
  const numbers = [...revisionsOf(revisions, ref).keys()].sort((a, b) => a - b);
  if (numbers.length > 0)
    return `${revisions.file} holds revision${numbers.length > 1 ? 's' : ''} ${numbers.join(', ')} of Template ${ref.namespace}/${ref.name}`;
  const others = [
    ...new Set(
      revisions.revisions.map(
        (r) => `${r.metadata.namespace ?? '(no namespace)'}/${r.spec.template}`,
      ),
    ),
  ];
  return `${revisions.file} holds no revision of Template ${ref.namespace}/${ref.name}${others.length > 0 ? ` (only of ${others.join(', ')})` : ' (it is empty)'}`;
}

export interface OfflineTemplate {
  /** What to render; undefined when no Template applies (the render reports TemplateNotFound). */
  template: Template | undefined;
  /** The revision rendered, when known. */
  revision?: number;
  /** How the revision was chosen, for the `# revision N` line. */
  chosenBy?: string;
  /** The instance's pin names a revision the file does not hold (a RevisionNotFound failure). */
  missingRevision?: number;
  /** Why, naming the revisions the file holds (replaces the operator's message offline). */
  missingMessage?: string;
}

export interface OfflineChoiceInputs {
  /** With its namespace defaulted. */
  instance: TemplateInstance;
  /** The live Template given with --template, when it is the one the instance references. */
  live: Template | undefined;
  revisions: RevisionsFile | undefined;
  /** A revision asked for on the command line, and the flag that asked (for messages). */
  revision?: { number: number; flag: string };
}

/**
 * The Template an instance renders offline: a revision asked for on the command line, else the
 * instance's pin, else the live Template (strategy All renders the newest content), else, with no
 * live Template, the newest revision in the file. A revision is rendered as the operator renders
 * it: the revision's content under the live Template's namespace and policy (templateAtRevision);
 * without a live Template, under the policy the revision recorded.
 */
export function chooseOfflineTemplate(inputs: OfflineChoiceInputs): OfflineTemplate {
  const { instance, live, revisions } = inputs;
  if (!revisions) return { template: live };
  const ref = templateRefOf(instance);
  const byNumber = revisionsOf(revisions, ref);
  const requested = inputs.revision?.number;
  if (live) {
    // The operator's own choice; offline there is no view of a progressive rollout.
    const choice = chooseContent({ instance, live, revisions: [...byNumber.values()], requested });
    return offlineTemplate(choice, inputs);
  }
  const wanted = requested ?? instance.spec.templateRef.revision;
  if (wanted === undefined) {
    if (byNumber.size === 0)
      throw new UsageError(
        `--revisions: ${heldRevisions(revisions, ref)}, and no --template was given to render`,
      );
    const newest = Math.max(...byNumber.keys());
    return {
      template: templateOfRevision(byNumber.get(newest)!, ref.namespace),
      revision: newest,
      chosenBy: `the newest in ${revisions.file}`,
    };
  }
  const found = byNumber.get(wanted);
  if (!found) return offlineTemplate({ template: live, missingRevision: wanted }, inputs);
  return {
    template: templateOfRevision(found, ref.namespace),
    revision: wanted,
    chosenBy: inputs.revision ? inputs.revision.flag : 'pinned by spec.templateRef.revision',
  };
}

/** The engine's choice as the CLI reports it: how it was made, or why it cannot be. */
function offlineTemplate(choice: ContentChoice, inputs: OfflineChoiceInputs): OfflineTemplate {
  const { instance, revisions } = inputs;
  const ref = templateRefOf(instance);
  const held = heldRevisions(revisions!, ref);
  const wanted = choice.missingRevision;
  if (wanted !== undefined) {
    if (inputs.revision)
      throw new UsageError(`${inputs.revision.flag} ${wanted}: no such revision; ${held}`);
    // A pin to a revision that is not there fails the instance, as in the cluster.
    return {
      template: choice.template,
      missingRevision: wanted,
      missingMessage: `spec.templateRef.revision: revision ${wanted} of Template ${ref.namespace}/${ref.name} is not in --revisions; ${held}`,
    };
  }
  if (choice.revision === undefined) return { template: choice.template };
  const chosenBy = inputs.revision
    ? inputs.revision.flag
    : instance.spec.templateRef.revision !== undefined
      ? 'pinned by spec.templateRef.revision'
      : 'the live Template';
  return { template: choice.template, revision: choice.revision, chosenBy };
}

/** A `--revision`-style flag's value: a whole number from 1. */
export function revisionNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(value))
    throw new UsageError(`${flag} must be a revision number (1, 2, ...), got "${value}"`);
  return Number(value);
}
