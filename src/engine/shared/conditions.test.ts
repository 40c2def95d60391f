import { describe, expect, it } from 'vitest';
import {
  boundMessage,
  draft,
  MAX_CONDITION_MESSAGE_LENGTH,
  mergeConditions,
  readyCondition,
} from './conditions.ts';

describe('Ready (SPEC §2)', () => {
  it('is True/Reconciled when every condition is True', () => {
    expect(
      readyCondition([
        draft('TemplateResolved', true, 'Success', ''),
        draft('Applied', true, 'Success', ''),
      ]),
    ).toMatchObject({ status: 'True', reason: 'Reconciled' });
  });

  it('copies the reason and message of the first failing condition in evaluation order', () => {
    const ready = readyCondition([
      draft('Applied', false, 'ApplyFailed', 'later failure'),
      draft('ParametersValid', false, 'OverrideNotAllowed', 'parameter "tier": locked'),
    ]);
    expect(ready).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'OverrideNotAllowed',
      message: 'parameter "tier": locked',
    });
  });
});

describe('merging conditions', () => {
  const before = mergeConditions(
    undefined,
    [draft('Applied', true, 'Success', 'ok')],
    '2026-01-01T00:00:00Z',
    1,
  );

  it('keeps lastTransitionTime while the status does not change', () => {
    expect(
      mergeConditions(
        before,
        [draft('Applied', true, 'Success', 'other message')],
        '2026-02-02T00:00:00Z',
        2,
      )[0],
    ).toEqual({
      type: 'Applied',
      status: 'True',
      reason: 'Success',
      message: 'other message',
      lastTransitionTime: '2026-01-01T00:00:00Z',
      observedGeneration: 2,
    });
  });

  it('moves lastTransitionTime when the status changes', () => {
    expect(
      mergeConditions(
        before,
        [draft('Applied', false, 'ApplyFailed', 'x')],
        '2026-02-02T00:00:00Z',
      )[0]?.lastTransitionTime,
    ).toBe('2026-02-02T00:00:00Z');
  });
});

describe('condition messages are bounded where status is written (issue #22, ADR 0017)', () => {
  const merged = (message: string): string =>
    mergeConditions(
      undefined,
      [draft('Rendered', false, 'TemplateExecutionFailed', message)],
      'now',
    )[0]!.message;

  it('cuts a 40,150-character message to 4,096 characters, ending in the marker', () => {
    const message = `parameter "ca": ${'x'.repeat(40_134)}`;
    const bounded = merged(message);
    expect(bounded).toHaveLength(MAX_CONDITION_MESSAGE_LENGTH);
    expect(bounded.endsWith('… (truncated)')).toBe(true);
    expect(message.startsWith(bounded.slice(0, -'… (truncated)'.length))).toBe(true);
  });

  it.each([
    ['a message of exactly the bound', 'y'.repeat(4096)],
    ['a short message', 'ok'],
  ])('leaves %s as it is', (_what, message) => {
    expect(merged(message)).toBe(message);
  });

  it('never splits a surrogate pair at the cut', () => {
    const message = `${'a'.repeat(4096 - 14)}😀${'b'.repeat(100)}`;
    const bounded = merged(message);
    expect(bounded).toBe(`${'a'.repeat(4096 - 14)}… (truncated)`);
    expect(boundMessage(bounded)).toBe(bounded);
  });
});
