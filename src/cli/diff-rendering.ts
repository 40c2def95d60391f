// What `stencil diff` and `stencil diff --instances` share: the two sides an instance is rendered
// with, one side's render, and the redaction of everything shown.
import type { JsonValue, KubeObject } from '../api/object-meta.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import type { ObjectSchemas } from '../engine/object-schema/object-schema.ts';
import type { Redactor } from '../engine/redaction/redaction.ts';
import { UsageError } from '../command-line.ts';
import { renderOffline, type OfflineRender } from './render-command.ts';
import type { OfflineTemplate } from './revisions-file.ts';

/** A side given as a Template the instance does not reference (--instances skips it). */
export class NotReferenced extends UsageError {}

export interface SideChoice {
  /** How the side was given, e.g. `--from old.yaml` or `--to-revision 3 (revs.yaml)`. */
  source: string;
  choice: OfflineTemplate;
}

/** One instance and the two sides it is rendered with. */
export interface DiffTarget {
  instance: TemplateInstance;
  from: SideChoice;
  to: SideChoice;
}

/** Both sides for one instance; a UsageError when a side is not the Template it references. */
export type Sides = (instance: TemplateInstance) => DiffTarget;

/**
 * Every string of `value` redacted; a number or boolean that is (part of) a secret becomes the
 * redacted text, so the JSON output stays valid and shows no Secret value either.
 */
export function redactValue(value: JsonValue, redactors: Redactor[]): JsonValue {
  const text = (s: string): string => redactors.reduce((t, r) => r.redact(t), s);
  if (typeof value === 'string') return text(value);
  if (typeof value === 'number' || typeof value === 'boolean') {
    const shown = text(String(value));
    return shown === String(value) ? value : shown;
  }
  if (Array.isArray(value)) return value.map((v) => redactValue(v, redactors));
  if (value === null) return null;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [text(k), redactValue(v, redactors)]),
  );
}

/**
 * One side's render. An error thrown inside it (a bug, not a refusal) is still a failure to
 * render that side: exit 2, one line naming the side and the error's class. Its message is
 * withheld, since nothing redacted it and it may quote a Secret (ADR 0017).
 */
export async function renderSide(
  inputs: DiffTarget,
  name: 'from' | 'to',
  objects: KubeObject[],
  schemas: ObjectSchemas,
): Promise<OfflineRender> {
  try {
    return await renderOffline(inputs.instance, inputs[name].choice, objects, schemas);
  } catch (err) {
    const { namespace, name: instanceName } = inputs.instance.metadata;
    const kind = err instanceof Error ? err.name : typeof err;
    throw new UsageError(
      `${inputs[name].source} does not render TemplateInstance ${namespace}/${instanceName}: the render threw ${kind} (message withheld: it may quote a Secret); this is a bug in stencil`,
    );
  }
}
