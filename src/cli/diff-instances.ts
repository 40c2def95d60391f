// `stencil diff --instances DIR`: the change preflight of issue #26, offline. Every
// TemplateInstance in DIR that references the Template is rendered with both sides, as
// `stencil diff` renders one; each is reported as unchanged, changed or failing (with the
// condition that says why), failures first, then the counts. Secret values never show: every
// text goes through both renders' redactors.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '../api/object-meta.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import type { ObjectSchemas } from '../engine/object-schema/object-schema.ts';
import { diffManifests, isEmptyDiff } from '../engine/sync/manifest-diff.ts';
import { UsageError } from '../command-line.ts';
import { NotReferenced, redactValue, renderSide, type Sides } from './diff-rendering.ts';
import { kindOf, readDocuments } from './manifest-files.ts';
import { instanceOf, type CommandResult, type OfflineRender } from './render-command.ts';

type Outcome = 'failed' | 'changed' | 'unchanged';

interface InstanceResult {
  instance: string;
  result: Outcome;
  /** Why the --to side does not render (failed), or what changes (changed). */
  detail?: string;
}

function isList(value: unknown): value is { items: unknown[] } {
  return kindOf(value) === 'List' && Array.isArray((value as { items?: unknown }).items);
}

/** A document, or the items of a `List` (what `kubectl get -o yaml` prints for many objects). */
function listItems(value: unknown): unknown[] {
  return isList(value) ? value.items : [value];
}

/**
 * The TemplateInstances of the YAML and JSON files directly in `dir` (documents, and the items
 * of `List` documents), in file order.
 */
function instancesIn(dir: string): TemplateInstance[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (err) {
    throw new UsageError(
      `--instances ${dir}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`,
    );
  }
  return names
    .filter((n) => /\.(ya?ml|json)$/.test(n))
    .map((n) => join(dir, n))
    .filter((file) => statSync(file).isFile())
    .flatMap((file) =>
      readDocuments(file).flatMap((doc) =>
        listItems(doc.value)
          .filter((value) => kindOf(value) === 'TemplateInstance')
          .map((value, i) =>
            instanceOf(`${file}#${doc.index}${isList(doc.value) ? `.items[${i}]` : ''}`, value),
          ),
      ),
    );
}

/** Why a side did not render: its failing condition, as `stencil diff` words it. */
function failure(render: OfflineRender): string {
  const condition = render.conditions[render.conditions.length - 2]!;
  return `${condition.type}=False ${condition.reason}: ${condition.message}`;
}

function summary(counts: Record<Outcome, number>, skipped: number): string {
  const skip = skipped > 0 ? `; ${skipped} instance(s) of other Templates skipped` : '';
  return `${counts.changed} change, ${counts.unchanged} unchanged, ${counts.failed} fail${skip}`;
}

export async function diffInstances(
  dir: string,
  sides: Sides,
  objects: KubeObject[],
  options: { output: 'text' | 'json'; schemas: ObjectSchemas },
): Promise<CommandResult> {
  const results: InstanceResult[] = [];
  let skipped = 0;
  let sources: { from: string; to: string } | undefined;
  for (const instance of instancesIn(dir)) {
    let target;
    try {
      target = sides(instance);
    } catch (err) {
      if (!(err instanceof NotReferenced)) throw err;
      skipped++; // an instance of another Template: not part of this change
      continue;
    }
    sources ??= { from: target.from.source, to: target.to.source };
    const from = await renderSide(target, 'from', objects, options.schemas);
    const to = await renderSide(target, 'to', objects, options.schemas);
    const redactors = [from.evaluation.redactor, to.evaluation.redactor];
    const key = `${instance.metadata.namespace}/${instance.metadata.name}`;
    const redacted = (text: string): string => redactValue(text, redactors) as string;
    if (!to.ok) {
      results.push({ instance: key, result: 'failed', detail: redacted(failure(to)) });
      continue;
    }
    const diff = diffManifests(from.ok ? from.evaluation.resources : [], to.evaluation.resources);
    if (from.ok && isEmptyDiff(diff)) {
      results.push({ instance: key, result: 'unchanged' });
      continue;
    }
    const detail = from.ok
      ? `${diff.added.length} added, ${diff.changed.length} changed, ${diff.pruned.length} pruned`
      : `renders again (before: ${redacted(failure(from))})`;
    results.push({ instance: key, result: 'changed', detail });
  }
  if (!sources)
    throw new UsageError(`--instances ${dir}: no TemplateInstance of the Template in it`);
  const order: Outcome[] = ['failed', 'changed', 'unchanged'];
  results.sort((a, b) => order.indexOf(a.result) - order.indexOf(b.result));
  const counts = { failed: 0, changed: 0, unchanged: 0 };
  for (const r of results) counts[r.result]++;
  const exitCode = counts.failed > 0 ? 2 : counts.changed > 0 ? 1 : 0;
  if (options.output === 'json') {
    const report = { ...sources, total: results.length, ...counts, skipped, instances: results };
    return {
      exitCode,
      stdout: `${JSON.stringify(report, null, 2)}\n`,
      stderr: '',
    };
  }
  const mark: Record<Outcome, string> = { failed: '✗', changed: '~', unchanged: '=' };
  const lines = [
    `${sources.from} → ${sources.to} over ${results.length} instance(s) in ${dir}: ${summary(counts, skipped)}`,
    ...results.map((r) => `  ${mark[r.result]} ${r.instance}${r.detail ? `: ${r.detail}` : ''}`),
  ];
  return { exitCode, stdout: `${lines.join('\n')}\n`, stderr: '' };
}
