// The status an instance gets bounds every condition message (issue #22, ADR 0017): a
// 40,000-character value quoted in a failure would otherwise make Rendered and Ready messages
// the CRD's maxLength (32,768) refuses, and the status write would fail.
import { describe, expect, it } from 'vitest';
import { aTemplate, anInstance } from '../../../test/support/builders.ts';
import { MAX_CONDITION_MESSAGE_LENGTH, TRUNCATION_MARKER } from '../shared/conditions.ts';
import { evaluateInstance } from '../evaluation/instance-evaluation.ts';
import { nextInstanceStatus } from './instance-status.ts';
import { MemorySource } from '../sources/memory-source.ts';

describe('an instance status', () => {
  it('cuts a 40,000-character failure message in Rendered and Ready, with the marker', async () => {
    const handlebars =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    stencil.dev/wave: "{{parameters.w}}"\n';
    const template = aTemplate([{ name: 'w' }], { handlebars });
    const instance = anInstance([{ name: 'w', value: 'x'.repeat(40_000) }]);
    const evaluation = await evaluateInstance({
      instance,
      template,
      namespaceLabels: {},
      port: new MemorySource([]),
    });
    const rendered = evaluation.conditions.find((c) => c.type === 'Rendered')!;
    expect(rendered.message.length).toBeGreaterThan(40_000);
    const status = nextInstanceStatus({
      instance,
      template,
      evaluation,
      trackedGVKs: [],
      now: '2026-12-03T00:00:00Z',
    });
    for (const type of ['Rendered', 'Ready']) {
      const message = status.conditions!.find((c) => c.type === type)!.message;
      expect(message).toHaveLength(MAX_CONDITION_MESSAGE_LENGTH);
      expect(message).toMatch(
        /^spec\.handlebars: ConfigMap team-a\/c: stencil\.dev\/wave must be a whole number, got "x{100}/,
      );
      expect(message.endsWith(TRUNCATION_MARKER)).toBe(true);
    }
    for (const condition of status.conditions!)
      expect(condition.message.length).toBeLessThanOrEqual(MAX_CONDITION_MESSAGE_LENGTH);
  });
});
