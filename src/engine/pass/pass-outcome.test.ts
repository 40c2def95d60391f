import { describe, expect, it } from 'vitest';
import { InstanceReason } from '../../api/condition.ts';
import { dispositionOf, type Disposition } from './pass-outcome.ts';

describe('how a pass that could not render ends (one classification, issue #23)', () => {
  it.each([
    [InstanceReason.TemplateNotFound, 'terminal'],
    [InstanceReason.RevisionNotFound, 'terminal'],
    // Defect 4: an unreadable or refused lifetime was retried with backoff (7 retries in 10 s).
    [InstanceReason.InvalidTTL, 'terminal'],
    [InstanceReason.TTLNotAllowed, 'terminal'],
    [InstanceReason.NamespaceNotPermitted, 'terminal'],
    [InstanceReason.InvalidParameter, 'terminal'],
    [InstanceReason.OverrideNotAllowed, 'terminal'],
    [InstanceReason.ReferenceNotPermitted, 'terminal'],
    [InstanceReason.SourceNotAuthorized, 'terminal'],
    [InstanceReason.TemplateExecutionFailed, 'terminal'],
    [InstanceReason.RenderTimeout, 'terminal'],
    // A rendered object its schema refuses (a duplicate list-map key): the same every time.
    [InstanceReason.InvalidResource, 'terminal'],
    // A source may appear: retried.
    [InstanceReason.ParameterResolutionFailed, 'retry'],
    [InstanceReason.ApplyFailed, 'retry'],
    ['SomethingNew', 'retry'],
  ] as [string, Disposition][])('%s: %s', (reason, disposition) => {
    expect(dispositionOf({ reason })).toBe(disposition);
  });

  it('waits on a settled source failure (a JSONPath matching over 10,000 values)', () => {
    const reason = InstanceReason.ParameterResolutionFailed;
    expect(dispositionOf({ reason, settled: true })).toBe('terminal');
  });

  it('retries an input reason when the cluster, not an input, must change', () => {
    expect(dispositionOf({ reason: InstanceReason.TemplateExecutionFailed, transient: true })).toBe(
      'retry',
    );
  });
});
