// The `observed` helper's contract: `{{observed "<apiVersion>" "<kind>" "<name>" "<jsonpath>"}}`
// reads a field of an object that an earlier wave of the same instance applied. The engine never
// reads the cluster: a render receives the live producers as an `ObservedLookup`, records what
// each object read, and the placement rule (producer in an earlier wave) is checked here.
import type { KubeObject } from '../../api/object-meta.ts';
import { InstanceReason } from '../../api/condition.ts';
import { describeObject, waveOf } from '../objects/inventory.ts';
import {
  evaluateJsonPath,
  MAX_JSONPATH_INTERMEDIATE,
  MAX_JSONPATH_MATCHES,
} from '../shared/jsonpath.ts';
import type { Problem } from '../shared/problem.ts';

export const OBSERVED_HELPER = 'observed';
export const OBSERVED_USAGE = '{{observed "v1" "Service" "web" ".spec.clusterIP"}}';

/** The object an `observed` call names (its namespace is always the instance's). */
export interface ObservedRef {
  apiVersion: string;
  kind: string;
  name: string;
}

/** One `observed` call of a template body, all four arguments literal. */
export interface ObservedCall extends ObservedRef {
  jsonPath: string;
  /** 1-based line and column of the call in the body. */
  line: number;
  column: number;
}

/**
 * The live producers, by apiVersion, kind and name; undefined when the producer is not there
 * (not applied by this instance yet). The reconciler reads them from the cluster, `stencil
 * render` from its --objects files, the Template's dry run has none.
 */
export type ObservedLookup = (ref: ObservedRef) => KubeObject | undefined;

/**
 * What one rendered object read with `observed`: `found`, `missing` (no producer yet) or
 * `nomatch` (the producer is there, the JSONPath selects nothing), or `overlimit` (it selects
 * more than {@link MAX_JSONPATH_MATCHES} values, or over {@link MAX_JSONPATH_INTERMEDIATE} at a step). Until every input of an
 * object is `found`, the object is rendered with `""` in place of the value and must not be
 * applied.
 */
export interface ObservedInput extends ObservedRef {
  jsonPath: string;
  state: 'found' | 'missing' | 'nomatch' | 'overlimit';
}

/** What an `overlimit` input is told: the limit, not "matched nothing" (ADR 0017). */
export const OVER_LIMIT = `selects more values than an observed read may (the limits: ${MAX_JSONPATH_MATCHES} matches, ${MAX_JSONPATH_INTERMEDIATE} values at any step)`;

/** The value a render inserts: one match as it is, several as a list. */
export function observedValue(
  object: KubeObject,
  jsonPath: string,
): { ok: true; value: unknown } | { ok: false; state: 'nomatch' | 'overlimit' } {
  const matches = evaluateJsonPath(jsonPath, object);
  if (!matches.ok) return { ok: false, state: 'overlimit' };
  if (matches.value.length === 0) return { ok: false, state: 'nomatch' };
  return { ok: true, value: matches.value.length === 1 ? matches.value[0] : matches.value };
}

export function observedKey(ref: ObservedRef & { jsonPath?: string }): string {
  return JSON.stringify([ref.apiVersion, ref.kind, ref.name, ref.jsonPath ?? '']);
}

/** Secrets are refused: a copied Secret value would land in a field nobody redacts. */
export function isSecretRef(ref: { apiVersion: string; kind: string }): boolean {
  return ref.apiVersion === 'v1' && ref.kind === 'Secret';
}

/**
 * The rendered object an observed input reads: the one of that apiVersion, kind and name in the
 * instance's namespace, or cluster-scoped (no namespace once placed).
 */
export function observedProducer(
  input: ObservedRef,
  objects: readonly KubeObject[],
  instanceNamespace: string,
): KubeObject | undefined {
  return objects.find(
    (o) =>
      o.apiVersion === input.apiVersion &&
      o.kind === input.kind &&
      o.metadata.name === input.name &&
      (o.metadata.namespace === undefined || o.metadata.namespace === instanceNamespace),
  );
}

/**
 * Checks the rendered objects (placed: namespaces set) against the rule of `observed`: the
 * producer is an object of the same render, in the instance's namespace (or cluster-scoped), of
 * a lower wave than the object that reads it. One problem per broken read, naming both objects.
 */
export function observedPlacementProblems(
  objects: readonly KubeObject[],
  inputs: readonly (readonly ObservedInput[])[],
  instanceNamespace: string,
): Problem[] {
  const problems: Problem[] = [];
  objects.forEach((reader, i) => {
    for (const input of inputs[i] ?? []) {
      const producer = observedProducer(input, objects, instanceNamespace);
      const read = `${describeObject(reader)} reads ${input.jsonPath} of ${input.apiVersion} ${input.kind} "${input.name}" with observed`;
      if (!producer) {
        problems.push({
          path: 'spec.handlebars',
          reason: InstanceReason.TemplateExecutionFailed,
          message: `${read}, but this Template renders no such object in namespace ${instanceNamespace}; observed reads only objects of the same instance`,
        });
        continue;
      }
      const [readerWave, producerWave] = [waveOf(reader), waveOf(producer)];
      if (producerWave >= readerWave) {
        problems.push({
          path: 'spec.handlebars',
          reason: InstanceReason.TemplateExecutionFailed,
          message: `${read}, but ${describeObject(producer)} is in wave ${producerWave} and ${describeObject(reader)} in wave ${readerWave}: an object reads only objects of earlier waves; give ${describeObject(reader)} a stencil.dev/wave above ${producerWave}`,
        });
      }
    }
  });
  return problems;
}

/**
 * Why `reader` cannot be applied yet, or nothing when every observed input was found. `objects`
 * are the placed objects of the same render (the producer is one of them).
 */
export function observedWait(
  reader: KubeObject,
  inputs: readonly ObservedInput[],
  objects: readonly KubeObject[],
  instanceNamespace: string,
): string | undefined {
  const pending = inputs.find((input) => input.state !== 'found');
  if (!pending) return undefined;
  const producer = describeObject(
    observedProducer(pending, objects, instanceNamespace) ?? {
      kind: pending.kind,
      name: pending.name,
      namespace: instanceNamespace,
    },
  );
  return pending.state === 'missing'
    ? `${describeObject(reader)} waits for ${producer}, which it reads with observed (not applied by this instance yet)`
    : `${describeObject(reader)} waits for ${producer}: observed ${pending.jsonPath} ${pending.state === 'overlimit' ? OVER_LIMIT : 'matched nothing'} in it`;
}
