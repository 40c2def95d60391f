import { describe, expect, it } from 'vitest';
import { aService, aTemplate, anInstance } from '../../../test/support/builders.ts';
import type { KubeObject } from '../../api/object-meta.ts';
import { evaluateInstance } from '../evaluation/instance-evaluation.ts';
import { MemorySource } from '../sources/memory-source.ts';
import { observedValue, observedWait, type ObservedInput } from './observed.ts';
import { compileTemplate, renderTemplate, type RenderContext } from '../render/render.ts';

const CONTEXT: RenderContext = {
  parameters: { hosts: ['a', 'b'] },
  instance: { name: 'shop', namespace: 'team-a', uid: 'u', labels: {}, annotations: {} },
  template: { name: 'web-app', namespace: 'platform', generation: 1 },
};

const SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: db
spec:
  ports: [{port: 5432}]
`;

/** A wave-1 ConfigMap named `name` whose data is `data` (template text). */
const reader = (name: string, data: string, wave = '1'): string => `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  annotations:
    stencil.dev/wave: "${wave}"
data:
${data}`;

function compile(body: string): ReturnType<typeof compileTemplate> {
  return compileTemplate(body, ['hosts']);
}

function render(body: string, live: KubeObject[] = []): ReturnType<typeof renderTemplate> {
  const compiled = compile(body);
  if (!compiled.ok) throw new Error(compiled.problems[0]!.message);
  return renderTemplate(compiled.value, CONTEXT, (ref) =>
    live.find(
      (o) => o.apiVersion === ref.apiVersion && o.kind === ref.kind && o.metadata.name === ref.name,
    ),
  );
}

function problems(body: string): string[] {
  const compiled = compile(body);
  return compiled.ok ? [] : compiled.problems.map((p) => p.message);
}

describe('the arguments of observed', () => {
  it.each([
    [
      'a parameter as the name',
      'x: {{observed "v1" "Service" parameters.hosts ".spec.clusterIP"}}',
      'line 1, column 4: the name argument of observed must be a non-empty string literal',
    ],
    [
      'a subexpression as the path',
      'x: {{observed "v1" "Service" "db" (concat "." "spec")}}',
      'line 1, column 4: the jsonpath argument of observed must be a non-empty string literal',
    ],
    [
      'an empty kind',
      'x: {{observed "v1" "" "db" ".spec"}}',
      'the kind argument of observed must be a non-empty string literal',
    ],
    ['three arguments', 'x: {{observed "v1" "Service" "db"}}', 'observed expects 4 arguments'],
    ['no argument', 'x: {{observed}}', 'line 1, column 4: observed expects 4 arguments'],
    [
      'a named argument',
      'x: {{observed "v1" "Service" "db" ".spec" at="x"}}',
      'observed takes no named arguments',
    ],
    [
      'a Secret',
      'x: {{observed "v1" "Secret" "db" ".data.password"}}',
      'observed cannot read a Secret ("db")',
    ],
    [
      'a JSONPath in braces',
      'x: {{observed "v1" "Service" "db" "{.spec}"}}',
      'the jsonpath "{.spec}" of observed is not valid',
    ],
    [
      'a block deciding on it',
      '{{#if (observed "v1" "Service" "db" ".spec.clusterIP")}}x: 1{{/if}}',
      'line 1, column 7: observed cannot decide a block ({{#if}})',
    ],
    [
      'a loop over it',
      '{{#each (concat (observed "v1" "Service" "db" ".spec.ports"))}}x: 1{{/each}}',
      'observed cannot decide a block ({{#each}})',
    ],
  ])('refuses %s, with line and column', (_name, body, message) => {
    expect(problems(body).join('\n')).toContain(message);
  });

  it('collects the literal calls in body order, with their positions', () => {
    const compiled = compile(
      `${SERVICE}${reader('cfg', '  a: {{observed "v1" "Service" "db" ".spec.clusterIP"}}\n  b: {{upper (observed "v1" "Service" "db" ".metadata.name")}}\n')}`,
    );
    expect(compiled.ok && compiled.value.observed).toEqual([
      {
        apiVersion: 'v1',
        kind: 'Service',
        name: 'db',
        jsonPath: '.spec.clusterIP',
        line: 15,
        column: 6,
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        name: 'db',
        jsonPath: '.metadata.name',
        line: 16,
        column: 14,
      },
    ]);
  });
});

describe('rendering with observed values', () => {
  const live = aService('db', 'team-a', {}, '10.0.3.4');

  it('inserts the value as a value: a hostile one cannot add keys', () => {
    const hostile = aService('db', 'team-a', {}, '10.0.3.4\nhostNetwork: true');
    const out = render(
      `${SERVICE}${reader('cfg', '  ip: {{observed "v1" "Service" "db" ".spec.clusterIP"}}\n')}`,
      [hostile],
    );
    expect(out.ok && out.value[1]!.object.data).toEqual({ ip: '10.0.3.4\nhostNetwork: true' });
  });

  it('keeps the JSON type of a whole scalar, and gives several matches as a list', () => {
    const service = { ...live, spec: { ports: [{ port: 5432 }, { port: 9187 }] } };
    const out = render(
      `${SERVICE}${reader(
        'cfg',
        '  first: {{observed "v1" "Service" "db" ".spec.ports[0].port"}}\n  all: {{toJson (observed "v1" "Service" "db" ".spec.ports[*].port")}}\n',
      )}`,
      [service],
    );
    expect(out.ok && out.value[1]!.object.data).toEqual({ first: 5432, all: [5432, 9187] });
  });

  it('tells which document read what, through loops and helpers', () => {
    const body = `${SERVICE}{{#each parameters.hosts}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg-{{this}}
  annotations: {stencil.dev/wave: "1"}
data:
  url: {{concat "http://" (observed "v1" "Service" "db" ".spec.clusterIP") ":5432"}}
  missing: {{observed "v1" "Service" "db" ".status.loadBalancer.ingress[0].ip"}}
{{/each}}`;
    const out = render(body, [live]);
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.value.map((d) => d.object.metadata.name)).toEqual(['db', 'cfg-a', 'cfg-b']);
    expect(out.value[0]!.observed).toEqual([]);
    for (const doc of out.value.slice(1)) {
      expect(doc.object.data).toEqual({ url: 'http://10.0.3.4:5432', missing: '' });
      expect(doc.observed.map((o) => [o.jsonPath, o.state])).toEqual([
        ['.spec.clusterIP', 'found'],
        ['.status.loadBalancer.ingress[0].ip', 'nomatch'],
      ]);
    }
  });

  it('puts "" in place of a producer that is not there, and says so', () => {
    const out = render(
      `${SERVICE}${reader('cfg', '  ip: {{observed "v1" "Service" "db" ".spec.clusterIP"}}\n')}`,
    );
    expect(out.ok && out.value[1]).toMatchObject({
      object: { data: { ip: '' } },
      observed: [{ kind: 'Service', name: 'db', jsonPath: '.spec.clusterIP', state: 'missing' }],
    });
  });

  it('refuses a value that would forge an attribution mark through a YAML helper', () => {
    const forged = aService('db', 'team-a', {}, '\uE0050\uE006');
    const out = render(
      `${SERVICE}${reader('cfg', '  ip: {{toJson (observed "v1" "Service" "db" ".spec.clusterIP")}}\n')}`,
      [forged],
    );
    expect(out.ok ? [] : out.problems.map((p) => p.message)).toEqual([
      'render failed: line 15, column 7: the output of toJson: a value contains the reserved characters U+E000-U+E006',
    ]);
  });
});

describe('an instance whose objects read with observed', () => {
  const body = `${SERVICE}${reader('cfg', '  ip: {{observed "v1" "Service" "db" ".spec.clusterIP"}}\n')}`;

  async function evaluate(
    handlebars: string,
    live: KubeObject[],
  ): ReturnType<typeof evaluateInstance> {
    const port = new MemorySource(live);
    return evaluateInstance({
      instance: anInstance(),
      template: aTemplate([], { handlebars }),
      namespaceLabels: {},
      port,
      observe: async (ref) => {
        const read = await port.get(ref);
        return read.ok ? read.value : undefined;
      },
    });
  }

  it('reads the producer in the instance namespace and renders with its value', async () => {
    const evaluation = await evaluate(body, [aService('db', 'team-a', {}, '10.0.3.4')]);
    expect(evaluation.ok).toBe(true);
    expect(evaluation.resources[1]!.data).toEqual({ ip: '10.0.3.4' });
    expect(evaluation.waits).toEqual([undefined, undefined]);
  });

  it('holds the reader back, naming the producer, while the producer is not there', async () => {
    const evaluation = await evaluate(body, [aService('db', 'elsewhere', {}, '10.0.3.4')]);
    expect(evaluation.ok).toBe(true);
    expect(evaluation.waits).toEqual([
      undefined,
      'ConfigMap team-a/cfg waits for Service team-a/db, which it reads with observed (not applied by this instance yet)',
    ]);
  });

  it('fails Rendered, naming both objects, when the reader is not in a later wave', async () => {
    const evaluation = await evaluate(
      `${SERVICE}${reader('cfg', '  ip: {{observed "v1" "Service" "db" ".spec.clusterIP"}}\n', '{{#if true}}0{{/if}}')}`,
      [],
    );
    expect(evaluation.ok).toBe(false);
    expect(evaluation.problem).toMatchObject({
      reason: 'TemplateExecutionFailed',
      message:
        'ConfigMap team-a/cfg reads .spec.clusterIP of v1 Service "db" with observed, but Service team-a/db is in wave 0 and ConfigMap team-a/cfg in wave 0: an object reads only objects of earlier waves; give ConfigMap team-a/cfg a stencil.dev/wave above 0',
    });
  });

  it('fails Rendered when no rendered object is the producer', async () => {
    const evaluation = await evaluate(
      `${SERVICE}${reader('cfg', '  ip: {{observed "v1" "Service" "cache" ".spec.clusterIP"}}\n')}`,
      [],
    );
    expect(evaluation.problem?.message).toBe(
      'ConfigMap team-a/cfg reads .spec.clusterIP of v1 Service "cache" with observed, but this Template renders no such object in namespace team-a; observed reads only objects of the same instance',
    );
  });
});

describe('observedWait names the match limit (issue #22, ADR 0017)', () => {
  it('for a read over the limit, and "matched nothing" only for a read that matched nothing', () => {
    const reader = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'r', namespace: 'ns' },
    } as KubeObject;
    const input = (state: ObservedInput['state']): ObservedInput[] => [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'src', jsonPath: '.data.*', state },
    ];
    expect(observedWait(reader, input('overlimit'), [], 'ns')).toBe(
      'ConfigMap ns/r waits for ConfigMap ns/src: observed .data.* selects more values than an observed read may (the limits: 10000 matches, 100000 values at any step) in it',
    );
    expect(observedWait(reader, input('nomatch'), [], 'ns')).toBe(
      'ConfigMap ns/r waits for ConfigMap ns/src: observed .data.* matched nothing in it',
    );
    const many = {
      ...reader,
      data: Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`k${i}`, 'v'])),
    };
    expect(observedValue(many as KubeObject, '.data.*')).toEqual({ ok: false, state: 'overlimit' });
    expect(observedValue(many as KubeObject, '.data.none')).toEqual({
      ok: false,
      state: 'nomatch',
    });
  });
});
