// The render pool with real worker threads: the same outcome as a render on this thread, a
// deadline that stops a render which would run for minutes while this thread stays free, a pool
// that keeps serving after a worker was terminated, and idle workers terminated but one.
import { afterEach, describe, expect, it } from 'vitest';
import type { JsonValue } from '../../api/object-meta.ts';
import { runRenderJob, type RenderJob } from '../../engine/render/render-job.ts';
import { RenderPool } from './render-pool.ts';

function job(
  body: string,
  parameters: Record<string, JsonValue>,
  secret: string[] = [],
): RenderJob {
  return {
    template: 'platform/web-app',
    body,
    parameters: Object.keys(parameters),
    context: {
      parameters,
      instance: { name: 'shop', namespace: 'team-a', uid: 'u-1', labels: {}, annotations: {} },
      template: { name: 'web-app', namespace: 'platform', generation: 1 },
    },
    producers: new Map(),
    secret,
  };
}

const CONFIG_MAP =
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}\ndata:\n  v: {{upper parameters.pw}}\n';

/** Deep-compares two equal 20,000-key maps 60,000 times: minutes of CPU within every budget. */
function minutesLong(): RenderJob {
  const map = (): JsonValue =>
    Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]));
  return job(
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: slow\n{{#each parameters.l}}{{#if (eq ../parameters.a ../parameters.b)}}{{/if}}{{/each}}',
    { a: map(), b: map(), l: Array.from({ length: 60_000 }, (_, i) => i) },
  );
}

let pool: RenderPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

describe('the render pool', { timeout: 60_000 }, () => {
  it('renders in a worker exactly as on this thread, taint included', async () => {
    pool = new RenderPool({ size: 1, timeoutMs: 30_000 });
    const given = job(CONFIG_MAP, { pw: 'hunter2-secret' }, ['pw']);
    const outcome = await pool.render(given);
    expect(outcome).toEqual(runRenderJob(given));
    expect(outcome.tainted.get('HUNTER2-SECRET')).toBe('pw');
  });

  it('stops a render past the deadline with RenderTimeout, while this thread keeps running', async () => {
    pool = new RenderPool({ size: 1, timeoutMs: 1_500 });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 100);
    const started = Date.now();
    const outcome = await pool.render(minutesLong());
    clearInterval(ticker);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.problems[0]).toEqual({
      path: 'spec.handlebars',
      reason: 'RenderTimeout',
      message:
        'rendering Template platform/web-app took longer than 1.5 s (--render-timeout) and was stopped; nothing was applied',
    });
    // The event loop was free while the worker rendered: the ticker ran throughout.
    expect(ticks).toBeGreaterThanOrEqual(Math.floor((Date.now() - started) / 100) - 5);
    // The terminated worker is replaced: the next render works.
    expect((await pool.render(job(CONFIG_MAP, { pw: 'x' }))).ok).toBe(true);
  });

  it('serves a quick render beside a slow one', async () => {
    pool = new RenderPool({ size: 2, timeoutMs: 3_000 });
    const slow = pool.render(minutesLong());
    const quick = await pool.render(job(CONFIG_MAP, { pw: 'x' }));
    expect(quick.ok).toBe(true);
    expect((await slow).ok).toBe(false);
  });

  it('serves namespaces in turn: a quiet one waits for one slow render, not for all of them', async () => {
    // Found by a hostile-author probe: eight renders of one namespace, each running to the
    // deadline, held every other namespace's render for their whole sum.
    pool = new RenderPool({ size: 1, timeoutMs: 1_000 });
    const done: string[] = [];
    const inNamespace = (given: RenderJob, namespace: string): RenderJob => ({
      ...given,
      context: { ...given.context, instance: { ...given.context.instance, namespace } },
    });
    const slow = minutesLong();
    const renders = [
      ...['noisy-1', 'noisy-2', 'noisy-3'].map((name) =>
        pool!.render(inNamespace(slow, 'noisy')).then(() => done.push(name)),
      ),
      pool
        .render(inNamespace(job(CONFIG_MAP, { pw: 'x' }), 'quiet'))
        .then(() => done.push('quiet')),
    ];
    await Promise.all(renders);
    expect(done).toEqual(['noisy-1', 'quiet', 'noisy-2', 'noisy-3']);
  });

  it('starts workers on demand and terminates idle ones but the last (issue #25)', async () => {
    pool = new RenderPool({ size: 2, timeoutMs: 30_000, idleMs: 300 });
    expect(pool.workers).toBe(0);
    const both = await Promise.all([
      pool.render(job(CONFIG_MAP, { pw: 'a' })),
      pool.render(job(CONFIG_MAP, { pw: 'b' })),
    ]);
    expect(both.map((o) => o.ok)).toEqual([true, true]);
    expect(pool.workers).toBe(2);
    await new Promise((r) => setTimeout(r, 1_200));
    // One stays warm; the pool grows again when renders wait.
    expect(pool.workers).toBe(1);
    expect((await pool.render(job(CONFIG_MAP, { pw: 'c' }))).ok).toBe(true);
    expect(pool.workers).toBe(1);
  });

  it('fails what waits when it closes', async () => {
    pool = new RenderPool({ size: 1, timeoutMs: 30_000 });
    const slow = pool.render(minutesLong());
    const waiting = pool.render(job(CONFIG_MAP, { pw: 'x' }));
    await pool.close();
    for (const outcome of [await slow, await waiting]) expect(outcome.ok).toBe(false);
  });
});
