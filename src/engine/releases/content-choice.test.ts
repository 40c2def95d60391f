// The one choice of Template content (issue #23, defect 3): pin, progressive rollout, live.
import { describe, expect, it } from 'vitest';
import type { RolloutStatus, Template, TemplateRevision } from '../../api/template.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import { aTemplate, anInstance } from '../../../test/support/builders.ts';
import { chooseContent, latestRevision, type RolloutView } from './content-choice.ts';
import { contentHash, revisionContent } from './revisions.ts';
import { memberOf } from './rollout.ts';

const bodyOf = (n: number): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r${n}-{{instance.name}}\n`;

function live(revision: number, progressive: boolean, rollout?: RolloutStatus): Template {
  const template = aTemplate([], {
    handlebars: bodyOf(revision),
    sync: { mode: 'revert', ignoreFields: [`r${revision}`] },
    ...(progressive ? { rollout: { strategy: 'Progressive' as const } } : {}),
  });
  return { ...template, status: { latestRevision: revision, ...(rollout ? { rollout } : {}) } };
}

function revision(n: number): TemplateRevision {
  const content = revisionContent(live(n, false).spec);
  return {
    apiVersion: 'stencil.dev/v1alpha1',
    kind: 'TemplateRevision',
    metadata: { name: `web-app-r${n}`, namespace: 'platform' },
    spec: { template: 'web-app', revision: n, hash: contentHash(content), content },
  };
}

function instance(pin?: number, onRevision?: number): TemplateInstance {
  const base = anInstance();
  return {
    ...base,
    spec: { ...base.spec, templateRef: { ...base.spec.templateRef, revision: pin } },
    ...(onRevision ? { status: { revision: onRevision } } : {}),
  };
}

const halfway: RolloutStatus = {
  revision: 2,
  stableRevision: 1,
  stage: 0,
  admitted: 1,
  phase: 'Progressing',
};

/** The rollout's view: the instance at `position` within its stage. */
function view(position: number, inst = instance()): RolloutView {
  return { member: () => memberOf(inst, {}), position: () => position };
}

describe('chooseContent', () => {
  const both = [revision(1), revision(2)];

  it.each([
    // [name, the instance, the live Template, revisions at hand, rollout view, expected]
    {
      name: 'no Template',
      input: { instance: instance(), live: undefined, revisions: both },
      expected: { template: undefined },
    },
    {
      name: 'strategy All: the live Template, which revision 2 holds',
      input: { instance: instance(), live: live(2, false), revisions: both },
      expected: { revision: 2, latest: 2, ignore: 'r2' },
    },
    {
      name: 'strategy All, live content not a revision yet: the live Template, no number',
      input: { instance: instance(), live: live(3, false), revisions: both },
      expected: { revision: undefined, latest: 3, ignore: 'r3' },
    },
    {
      name: 'pinned to 1 while 2 is the newest: revision 1, latest 2',
      input: { instance: instance(1), live: live(2, false), revisions: both },
      expected: { revision: 1, latest: 2, ignore: 'r1' },
    },
    {
      name: 'pinned to a revision that does not exist',
      input: { instance: instance(7), live: live(2, false), revisions: both },
      expected: { missingRevision: 7, latest: 2 },
    },
    {
      name: 'progressive, admitted (position 0 < 1 admitted): the new revision',
      input: {
        instance: instance(),
        live: live(2, true, halfway),
        revisions: both,
        rollout: view(0),
      },
      expected: { revision: 2, latest: 2, ignore: 'r2' },
    },
    {
      name: 'progressive, not admitted yet: the stable revision, with its ignoreFields (defect 3)',
      input: {
        instance: instance(),
        live: live(2, true, halfway),
        revisions: both,
        rollout: view(1),
      },
      expected: { revision: 1, latest: 2, ignore: 'r1' },
    },
    {
      name: 'progressive, already on the new revision: never back',
      input: {
        instance: instance(undefined, 2),
        live: live(2, true, halfway),
        revisions: both,
        rollout: view(5, instance(undefined, 2)),
      },
      expected: { revision: 2, latest: 2 },
    },
    {
      name: 'progressive without a view of the rollout (offline): the live Template',
      input: { instance: instance(), live: live(2, true, halfway), revisions: both },
      expected: { revision: 2, latest: 2, ignore: 'r2' },
    },
    {
      name: 'asked for explicitly: wins over the pin',
      input: { instance: instance(2), live: live(2, false), revisions: both, requested: 1 },
      expected: { revision: 1, ignore: 'r1' },
    },
  ])('$name', ({ input, expected }) => {
    const choice = chooseContent(input);
    const { ignore, ...numbers }: { ignore?: string } = expected;
    expect(choice).toMatchObject(numbers);
    if (ignore) expect(choice.template?.spec.sync?.ignoreFields).toEqual([ignore]);
  });

  it("a pin keeps its revision's body, under the live sync mode and locked parameters", () => {
    const tightened = live(2, false);
    tightened.spec.sync = { mode: 'strict' };
    tightened.spec.parameters = [{ name: 'tier', disableOverride: true }];
    const old = revision(1);
    old.spec.content.sync = { mode: 'off', ignoreFields: ['r1'] };
    old.spec.content.parameters = [{ name: 'tier' }, { name: 'size' }];
    const choice = chooseContent({ instance: instance(1), live: tightened, revisions: [old] });
    expect(choice.template?.spec.handlebars).toBe(bodyOf(1));
    expect(choice.template?.spec.sync).toEqual({ mode: 'strict', ignoreFields: ['r1'] });
    expect(choice.template?.spec.parameters).toEqual([
      { name: 'tier', disableOverride: true },
      { name: 'size' },
    ]);
  });

  it('a revision not among those at hand is reported missing, then chosen once it is given', () => {
    const input = { instance: instance(1), live: live(2, false), revisions: [revision(2)] };
    expect(chooseContent(input).missingRevision).toBe(1);
    const fetched = chooseContent({ ...input, revisions: [revision(2), revision(1)] });
    expect(fetched).toMatchObject({ revision: 1, latest: 2 });
  });

  it('the newest revision counts the Template status when the revisions at hand lag', () => {
    expect(latestRevision(live(4, false), [revision(1)])).toBe(4);
    expect(latestRevision({ ...live(1, false), status: {} }, [])).toBeUndefined();
  });
});
