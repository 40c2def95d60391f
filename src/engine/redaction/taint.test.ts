import { describe, expect, it } from 'vitest';
import Handlebars from 'handlebars';
import { Taint } from './taint.ts';

function taintOf(parameters: Record<string, unknown>, secret: string[]): Taint {
  return Taint.of({ parameters }, secret);
}

describe('the taint of a render', () => {
  it('starts with every scalar and key of a Secret-backed parameter, and the maps that hold them', () => {
    const parameters = { pw: 'hunter2', cfg: { user: 'u', list: ['a1', 42, true] }, plain: 'x' };
    const taint = taintOf(parameters, ['pw', 'cfg']);
    expect([...taint.derived.entries()].sort()).toEqual([
      ['42', 'cfg'],
      ['a1', 'cfg'],
      ['hunter2', 'pw'],
      ['list', 'cfg'],
      ['true', 'cfg'],
      ['u', 'cfg'],
      ['user', 'cfg'],
    ]);
    expect(taint.ownerOf(parameters.cfg.list)).toBe('cfg');
    expect(taint.ownerOf(parameters)).toBe('pw');
    expect(taint.ownerOf('x')).toBeUndefined();
  });

  it.each([
    ['a text', 'HUNTER2', ['HUNTER2']],
    ['a list of new texts', ['hun', 'ter2'], ['hun', 'ter2']],
    ['the text of helper YAML', new Handlebars.SafeString('"hunter2"'), ['"hunter2"']],
    ['a boolean', false, ['false']],
    ['a count', 7, ['7']],
  ])('taints %s a helper made from a tainted argument', (_what, result, texts) => {
    const taint = taintOf({ pw: 'hunter2' }, ['pw']);
    taint.propagate(['-', 'hunter2'], result);
    for (const text of texts) expect(taint.derived.get(text)).toBe('pw');
  });

  it('leaves the result of untainted arguments alone', () => {
    const taint = taintOf({ pw: 'hunter2', plain: 'nginx' }, ['pw']);
    taint.propagate(['nginx'], 'NGINX');
    expect(taint.derived.has('NGINX')).toBe(false);
  });

  it('taints through helper YAML given as an argument', () => {
    const taint = taintOf({ pw: 'hunter2' }, ['pw']);
    const yaml = new Handlebars.SafeString('hunter2');
    taint.propagate(['hunter2'], yaml);
    taint.propagate([2, yaml], '  hunter2');
    expect(taint.derived.get('  hunter2')).toBe('pw');
  });

  it('is empty without Secret-backed parameters, and costs nothing then', () => {
    const taint = taintOf({ plain: 'x' }, []);
    taint.propagate(['x'], 'X');
    expect(taint.derived.size).toBe(0);
  });

  it('walks a value nested 100,000 levels deep without recursion', () => {
    let deep: unknown = 'bottom-secret';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(taintOf({ pw: deep }, ['pw']).derived.get('bottom-secret')).toBe('pw');
  });
});
