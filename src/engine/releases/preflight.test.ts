import { describe, expect, it } from 'vitest';
import { preflightCondition, preflightReport, type PreflightVerdict } from './preflight.ts';

const verdicts = (changed: number, unchanged: number, failed: string[]): PreflightVerdict[] => [
  ...Array.from({ length: changed }, (_, i) => ({
    instance: `c/${i}`,
    outcome: 'changed' as const,
  })),
  ...Array.from({ length: unchanged }, (_, i) => ({
    instance: `u/${i}`,
    outcome: 'unchanged' as const,
  })),
  ...failed.map((instance) => ({
    instance,
    outcome: 'failed' as const,
    reason: `${instance} bad`,
  })),
];

describe('the preflight report', () => {
  it.each([
    ['nothing checked yet', 5, verdicts(0, 0, []), 'Running'],
    ['part checked', 5, verdicts(2, 1, []), 'Running'],
    ['all checked, none failing', 5, verdicts(2, 3, []), 'Passed'],
    ['all checked, one failing', 5, verdicts(2, 2, ['x/a']), 'Failed'],
    ['no instances at all', 0, verdicts(0, 0, []), 'Passed'],
  ] as const)('%s: %s', (_, total, list, phase) => {
    expect(preflightReport(7, total, list).phase).toBe(phase);
  });

  it('counts each outcome and names at most ten failing instances, in name order', () => {
    const failing = Array.from({ length: 12 }, (_, i) => `ns/i${String(11 - i).padStart(2, '0')}`);
    const report = preflightReport(3, 30, verdicts(10, 8, failing));
    expect(report).toMatchObject({ revision: 3, total: 30, changed: 10, unchanged: 8, failed: 12 });
    expect(report.failing?.map((f) => f.instance)).toEqual(
      Array.from({ length: 10 }, (_, i) => `ns/i${String(i).padStart(2, '0')}`),
    );
  });

  it('keeps a long reason bounded', () => {
    const report = preflightReport(1, 1, [
      { instance: 'a/b', outcome: 'failed', reason: 'x'.repeat(5000) },
    ]);
    expect(report.failing![0]!.reason.length).toBeLessThanOrEqual(1024);
  });
});

describe('the Preflight condition', () => {
  it.each([
    ['running', preflightReport(2, 4, verdicts(1, 0, [])), 'Warn', 'False', 'PreflightRunning'],
    ['passed', preflightReport(2, 3, verdicts(2, 1, [])), 'Warn', 'True', 'PreflightPassed'],
    ['failed', preflightReport(2, 3, verdicts(1, 1, ['n/x'])), 'Warn', 'False', 'PreflightFailed'],
  ] as const)('%s', (_, report, mode, status, reason) => {
    expect(preflightCondition(report, mode)).toMatchObject({ type: 'Preflight', status, reason });
  });

  it('says what a failure does under each mode, and names the instances with their reasons', () => {
    const report = preflightReport(4, 30, verdicts(20, 7, ['t/a', 't/b', 't/c']));
    const warn = preflightCondition(report, 'Warn').message;
    expect(warn).toContain(
      'revision 4 checked against 30 instance(s): 20 would change, 7 unchanged, 3 would fail',
    );
    expect(warn).toContain('the rollout proceeds (preflight Warn)');
    expect(warn).toContain('t/a: t/a bad; t/b: t/b bad; t/c: t/c bad');
    expect(preflightCondition(report, 'Block').message).toContain('the rollout is blocked');
  });
});
