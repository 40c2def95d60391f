import { describe, expect, it } from 'vitest';
import { aTemplate } from '../../../test/support/builders.ts';
import { evaluateTemplate } from '../evaluation/template-evaluation.ts';

const PRODUCER = `apiVersion: v1
kind: Service
metadata:
  name: db
  annotations:
    stencil.dev/wave: "1"
spec:
  ports: [{port: 5432}]
`;

const READER = (wave: string, name = 'db'): string => `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}-endpoint
  annotations:
    stencil.dev/wave: ${wave}
data:
  ip: {{observed "v1" "Service" "${name}" ".spec.clusterIP"}}
`;

function validate(handlebars: string): { phase: string; messages: string[] } {
  const result = evaluateTemplate(aTemplate([], { handlebars }));
  return { phase: result.phase, messages: result.problems.map((p) => p.message) };
}

describe('the static placement check of observed (Valid condition)', () => {
  it('accepts a reader in a later wave than its producer', () => {
    expect(validate(`${PRODUCER}${READER('"2"')}`)).toEqual({ phase: 'Valid', messages: [] });
  });

  it.each([
    ['the same wave', '"1"', 'wave 1'],
    ['an earlier wave', '"0"', 'wave 0'],
  ])('refuses a read of an object of %s, naming both objects', (_name, wave, readerWave) => {
    expect(validate(`${PRODUCER}${READER(wave)}`)).toEqual({
      phase: 'Invalid',
      messages: [
        `line 17, column 7: ConfigMap "{{instance.name}}-endpoint" (${readerWave}) reads Service "db" (wave 1, line 1) with observed: an object reads only objects of earlier waves; give ConfigMap "{{instance.name}}-endpoint" a stencil.dev/wave above 1`,
      ],
    });
  });

  it('refuses a read of an object the Template does not render', () => {
    expect(validate(`${PRODUCER}${READER('"2"', 'cache')}`).messages).toEqual([
      'line 17, column 7: observed reads v1 Service "cache", but no document of this Template renders it with that literal apiVersion, kind and metadata.name; observed reads only objects the same Template renders',
    ]);
  });

  it('reads identities written in flow style or quoted, and negative waves', () => {
    const body = `apiVersion: "v1"
kind: 'Service'
metadata: { name: "db", annotations: { stencil.dev/wave: "-1" } }
spec: { ports: [{ port: 5432 }] }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: cfg }
data:
  ip: {{observed "v1" "Service" "db" ".spec.clusterIP"}}
`;
    expect(validate(body)).toEqual({ phase: 'Valid', messages: [] });
    expect(validate(body.replace('"-1"', '"0"')).messages).toEqual([
      'line 10, column 7: ConfigMap "cfg" (wave 0) reads Service "db" (wave 0, line 1) with observed: an object reads only objects of earlier waves; give ConfigMap "cfg" a stencil.dev/wave above 0',
    ]);
  });

  it("does not take a name nested under metadata for the object's own", () => {
    const body = `apiVersion: v1
kind: Service
metadata:
  labels:
    name: db
  name: other
---
apiVersion: v1
kind: ConfigMap
metadata: { name: cfg, annotations: { stencil.dev/wave: "1" } }
data:
  ip: {{observed "v1" "Service" "db" ".spec.clusterIP"}}
`;
    expect(validate(body).messages).toEqual([
      expect.stringContaining('observed reads v1 Service "db", but no document of this Template'),
    ]);
  });

  it('refuses an object reading itself', () => {
    const body = `apiVersion: v1
kind: ConfigMap
metadata: { name: self, annotations: { stencil.dev/wave: "1" } }
data:
  me: {{observed "v1" "ConfigMap" "self" ".metadata.name"}}
`;
    expect(validate(body).messages).toEqual([
      'line 5, column 7: ConfigMap "self" reads itself with observed; an object reads only objects of earlier waves',
    ]);
  });

  it('leaves a wave built with Handlebars to the render, which checks it exactly', () => {
    const result = validate(`${PRODUCER}${READER('"{{#if true}}1{{/if}}"')}`);
    expect(result.messages).toEqual([]);
    const dryRun = evaluateTemplate(
      aTemplate([], { handlebars: `${PRODUCER}${READER('"{{#if true}}1{{/if}}"')}` }),
    ).conditions.find((c) => c.type === 'DryRunRendered');
    expect(dryRun).toMatchObject({ status: 'False', reason: 'RenderFailed' });
    expect(dryRun?.message).toContain('Service platform/db is in wave 1 and ConfigMap');
  });
});
