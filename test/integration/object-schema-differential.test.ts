// Differential test of the offline schemas of the built-in kinds (issue #26, ADR 0029): valid
// objects of eighteen kinds (test/fixtures/built-in-objects.ts), each mutated in one place by
// fast-check (support/built-in-mutations.ts), go to the real API server as the operator sends
// them (server-side apply, field manager `stencil`, force, dry run) under fieldValidation=Strict,
// and to validateObject. Both must accept or both must refuse; the differences the offline check
// leaves to the dry run by design, or keeps on purpose, are each classified by a named rule below
// (ADR 0029, "Differential test"). Prints the counts of objects, acceptances and refusals per side. FC_SEED=<n> replays another seed,
// DIFF_PER_KIND=<n> makes more objects (an exploring run: 400 a kind take about 20 s).
import { mapLimit } from '../../src/reconcile/instance/resource-sync.ts';
import { fc } from '@fast-check/vitest';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { FIELD_MANAGER } from '../../src/api/well-known.ts';
import { KubernetesSchemas } from '../../src/engine/object-schema/kubernetes-schemas.ts';
import type { ObjectProblem } from '../../src/engine/object-schema/object-problems.ts';
import { validateObject } from '../../src/engine/object-schema/object-schema.ts';
import { connect as connectKube, type KubeConnection } from '../../src/kube/connection.ts';
import { Discovery, resourcePath } from '../../src/kube/discovery.ts';
import { schemaFileReader } from '../../src/kubernetes-schema-files.ts';
import { isClusterError } from '../../src/reconcile/cluster-port.ts';
import { validObjects } from '../fixtures/built-in-objects.ts';
import { runs } from '../support/property-runs.ts';
import {
  BundleSchemas,
  mutationsOf,
  type Json,
  type MutatedObject,
  type MutationName,
  type Path,
} from './support/built-in-mutations.ts';
import { connect, freshNamespace } from './support/cluster.ts';

/** Mutated objects per kind, besides the valid base object itself; DIFF_PER_KIND for more. */
const PER_KIND = Number(process.env.DIFF_PER_KIND ?? 130);
/** Dry runs in flight at once. */
const CONCURRENCY = 16;
/** The default seed; FC_SEED replays another. */
const SEED = 26;

let namespace: string;
let connection: KubeConnection;
let discovery: Discovery;

beforeAll(async () => {
  namespace = await freshNamespace(connect(), 'object-schema-diff');
  connection = await connectKube(inject('kubeconfig'));
  discovery = new Discovery(connection.http);
});

afterAll(() => connection?.http.close());

interface ServerVerdict {
  accepted: boolean;
  /** The object the dry run answered with, when it accepted. */
  answer?: Json;
  /** HTTP status of a refusal. */
  status?: number;
  message: string;
}

/** The API server's verdict on `object`: a server-side apply dry run as the operator sends it. */
async function serverVerdict(object: Json): Promise<ServerVerdict> {
  const apiVersion = object.apiVersion as string;
  const kind = object.kind as string;
  const resource = await discovery.resourceFor(apiVersion, kind);
  if (!resource) throw new Error(`the API server does not serve ${apiVersion} ${kind}`);
  const name = (object.metadata as Json).name as string;
  try {
    const answer = await connection.http.request<Json>({
      method: 'PATCH',
      path: resourcePath(apiVersion, resource.plural, namespace, name),
      query: {
        fieldManager: FIELD_MANAGER,
        force: 'true',
        dryRun: 'All',
        fieldValidation: 'Strict',
      },
      body: object,
      contentType: 'application/apply-patch+yaml',
    });
    return { accepted: true, answer, message: '' };
  } catch (error) {
    // Any answer of the server is a verdict; a failure to reach it is not.
    if (isClusterError(error) && error.status !== undefined && error.status >= 400) {
      return { accepted: false, status: error.status, message: error.message };
    }
    throw error;
  }
}

interface OfflineVerdict {
  accepted: boolean;
  problems: ObjectProblem[];
}

function offlineVerdict(object: Json, schemas: KubernetesSchemas): OfflineVerdict {
  const verdict = validateObject(object, schemas);
  if (!verdict.checked) throw new Error(`not checked: ${verdict.note}`);
  return { accepted: verdict.problems.length === 0, problems: verdict.problems };
}

function valueAt(object: unknown, at: Path): unknown {
  return at.reduce<unknown>((node, key) => (node as Json | undefined)?.[key], object);
}

interface Outcome {
  mutated: MutatedObject;
  offline: OfflineVerdict;
  server: ServerVerdict;
  /** The named rule that explains a difference, when one does. */
  rule?: string;
}

/**
 * The differences the offline check leaves to the dry run by design, or keeps on purpose (ADR
 * 0029, "Differential test"), each a named rule with the conditions that make it that and
 * nothing else.
 */
const RULES: { name: string; applies: (o: Outcome) => boolean }[] = [
  {
    // A null member is the field left out, and an empty enum value is the zero value Go reads as
    // absent: the schema has nothing against either (the ADR's "null" and "Enums" points), but
    // the Go validation of some fields requires a value (a container's image, an Ingress path's
    // pathType, a selector that still matches the template's labels). That validation answers
    // 422 Invalid; a decoding or schema refusal of server-side apply is a 500 (or a 400). A
    // field the schema requires is not covered: null there is missing, and the offline check
    // must say so itself.
    name: 'zero value refused by Go validation',
    applies: ({ mutated, offline, server }) =>
      ((mutated.mutation === 'null' && !mutated.required) || mutated.mutation === 'empty-enum') &&
      offline.accepted &&
      !server.accepted &&
      server.status === 422,
  },
  {
    // An atomic list (not a set, not keyed) takes any items as far as the schema and server-side
    // apply go; Go validation may still refuse a repeated item (a NetworkPolicy's policyTypes
    // "may not specify more than two"). A duplicate in a set or a keyed list is a decoding
    // refusal of server-side apply (a 500), never a 422, so the rule does not cover it.
    name: 'duplicate in an atomic list refused by Go validation',
    applies: ({ mutated, offline, server }) =>
      mutated.mutation === 'duplicate' &&
      offline.accepted &&
      !server.accepted &&
      server.status === 422,
  },
  {
    // Server-side apply reads every number as a float64, and the unstructured converter turns a
    // whole float into the Go integer type through int64, keeping the low bits: 2^31 in an int32
    // field becomes -2^31, -2^31 - 1 becomes 2^31 - 1, 2^63 in an int64 field becomes -2^63. Go
    // validation then judges the changed number (a negative count is refused, a wrapped
    // minReadySeconds passes). The strict JSON decoding of a create or update refuses such a
    // number; the offline check does the same rather than pass a value the server silently
    // changes. The rule holds only if the dry run's answer has another number at that path: the
    // wrapped one, or what the kind's own preparation makes of it (a Pod's negative
    // terminationGracePeriodSeconds becomes 1).
    name: 'integer beyond its Go type, wrapped by server-side apply',
    applies: ({ mutated, offline, server }) => {
      if (!/int(32|64) (overflow|underflow)/.test(mutated.change)) return false;
      const answered = valueAt(server.answer, mutated.at);
      return (
        !offline.accepted &&
        offline.problems.every((p) => p.keyword === 'format' && p.path === mutated.path) &&
        server.accepted &&
        typeof answered === 'number' &&
        answered !== valueAt(mutated.object, mutated.at)
      );
    },
  },
];

function offlineText({ accepted, problems }: OfflineVerdict): string {
  if (accepted) return 'accepted';
  return `refused: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`;
}

function serverText(server: ServerVerdict, at: Path): string {
  if (!server.accepted) return `refused (${server.status}): ${server.message}`;
  return `accepted, answering ${JSON.stringify(valueAt(server.answer, at)) ?? 'nothing'} there`;
}

/** Shown in full for this many disagreements, by their place only after that. */
const SHOWN = 40;

function describeOutcome(o: Outcome, index: number): string {
  const { mutated } = o;
  const head = `${mutated.kind} · ${mutated.mutation} at ${mutated.path || '(root)'}: ${mutated.change}`;
  if (index >= SHOWN) return head;
  return [
    head,
    `  offline: ${offlineText(o.offline)}`,
    `  server:  ${serverText(o.server, mutated.at)}`,
    `  object:  ${JSON.stringify(mutated.object)}`,
  ].join('\n');
}

function count<T>(items: T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

it('agrees with the API server on mutated objects of eighteen built-in kinds', async () => {
  const started = Date.now();
  const seed = runs(0).seed ?? SEED;
  const bundle = new BundleSchemas(schemaFileReader());
  const schemas = new KubernetesSchemas(schemaFileReader());
  const bases = Object.values(validObjects()).map((object): Json => ({
    ...object,
    metadata: { ...(object.metadata as Json), namespace },
  }));

  const cases: MutatedObject[] = bases.flatMap((base, i) => [
    {
      kind: base.kind as string,
      mutation: 'none',
      path: '',
      at: [],
      required: false,
      change: 'none',
      object: base,
    },
    ...fc.sample(mutationsOf(base, bundle), { numRuns: PER_KIND, seed: seed + i }),
  ]);

  const outcomes = await mapLimit(cases, CONCURRENCY, async (mutated): Promise<Outcome> => {
    const server = await serverVerdict(mutated.object);
    const offline = offlineVerdict(mutated.object, schemas);
    return { mutated, offline, server };
  });
  for (const outcome of outcomes) {
    if (outcome.offline.accepted !== outcome.server.accepted) {
      outcome.rule = RULES.find((r) => r.applies(outcome))?.name;
    }
  }

  const kinds = new Set(cases.map((c) => c.kind)).size;
  const agreements = outcomes.filter((o) => o.offline.accepted === o.server.accepted);
  const explained = outcomes.filter((o) => o.rule !== undefined);
  const disagreements = outcomes.filter(
    (o) => o.offline.accepted !== o.server.accepted && o.rule === undefined,
  );
  const accepted = (side: 'offline' | 'server'): number =>
    outcomes.filter((o) => o[side].accepted).length;
  console.log(
    `[differential] built-in objects (seed ${seed}): ${outcomes.length} objects of ${kinds} kinds in ` +
      `${((Date.now() - started) / 1000).toFixed(1)} s; offline ${accepted('offline')} accepted, ` +
      `${outcomes.length - accepted('offline')} refused; API server ${accepted('server')} accepted, ` +
      `${outcomes.length - accepted('server')} refused; ${agreements.length} agree, ` +
      `${explained.length} differ by a named rule, ${disagreements.length} disagree`,
  );
  const byMutation = new Map<MutationName, Outcome[]>();
  for (const o of outcomes) {
    byMutation.set(o.mutated.mutation, [...(byMutation.get(o.mutated.mutation) ?? []), o]);
  }
  for (const [mutation, group] of byMutation) {
    const both = (accepted: boolean): number =>
      group.filter((o) => o.offline.accepted === accepted && o.server.accepted === accepted).length;
    console.log(
      `[differential]   ${mutation}: ${group.length} objects, both accept ${both(true)}, ` +
        `both refuse ${both(false)}, differ ${group.length - both(true) - both(false)}`,
    );
  }
  for (const [rule, n] of count(explained, (o) => o.rule!)) {
    console.log(`[differential]   rule "${rule}": ${n} objects`);
  }

  expect(
    disagreements.map(describeOutcome),
    `${disagreements.length} objects where the offline check and the API server disagree`,
  ).toEqual([]);
  // Not a test that cannot fail: enough objects and kinds, acceptances and refusals on each side,
  // and both verdicts among the values of each format.
  expect(outcomes.length).toBeGreaterThanOrEqual(2000);
  expect(kinds).toBeGreaterThanOrEqual(12);
  for (const base of byMutation.get('none') ?? []) {
    expect(
      { offline: base.offline.accepted, server: base.server.accepted },
      `the valid ${base.mutated.kind}: ${serverText(base.server, [])}`,
    ).toEqual({ offline: true, server: true });
  }
  for (const side of ['offline', 'server'] as const) {
    expect(accepted(side), `${side} acceptances`).toBeGreaterThan(outcomes.length * 0.1);
    expect(outcomes.length - accepted(side), `${side} refusals`).toBeGreaterThan(
      outcomes.length * 0.4,
    );
  }
  for (const mutation of [
    'null',
    'duplicate',
    'int-or-string',
    'quantity',
    'base64',
    'date-time',
  ] as const) {
    const group = byMutation.get(mutation) ?? [];
    for (const verdict of [true, false]) {
      expect(
        group.some((o) => o.offline.accepted === verdict && o.server.accepted === verdict),
        `${mutation}: some objects ${verdict ? 'accepted' : 'refused'} by both`,
      ).toBe(true);
    }
  }
}, 300_000);
