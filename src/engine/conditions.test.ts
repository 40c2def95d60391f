import { describe, expect, it } from 'vitest';
import { draft, mergeConditions, readyCondition } from './conditions.ts';

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
