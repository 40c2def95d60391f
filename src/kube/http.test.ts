import { createServer, type Server } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClusterError } from '../reconcile/cluster-port.ts';
import { retryAfterMs } from './errors.ts';
import { KubeHttp } from './http.ts';
import type { RateLimit } from './rate-limiter.ts';

/** A loopback API server that answers each request with the next reply of `replies` (the last repeats). */
async function fakeServer(
  replies: { status: number; retryAfter?: string }[],
  rateLimit?: RateLimit,
): Promise<{ http: KubeHttp; hits: () => number; server: Server }> {
  let count = 0;
  const server = createServer((req, res) => {
    const reply = replies[Math.min(count++, replies.length - 1)]!;
    res.writeHead(reply.status, {
      'content-type': 'application/json',
      ...(reply.retryAfter === undefined ? {} : { 'retry-after': reply.retryAfter }),
    });
    res.end(JSON.stringify(reply.status === 200 ? { ok: true } : { message: 'slow down' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return { http: await KubeHttp.create(kubeConfig, rateLimit), hits: () => count, server };
}

let open: { http: KubeHttp; server: Server; hits: () => number } | undefined;
afterEach(async () => {
  vi.useRealTimers();
  const current = open;
  open = undefined;
  if (!current) return;
  current.http.close();
  current.server.closeAllConnections();
  await new Promise((resolve) => current.server.close(resolve));
});

describe('retryAfterMs (errors.ts)', () => {
  it.each([
    [429, '2', 2000],
    [429, '0', 0],
    [503, '1', 1000],
    [429, '3600', 30_000],
    [429, undefined, undefined],
    [429, 'Wed, 21 Oct 2026 07:28:00 GMT', undefined],
    [409, '1', undefined],
    [404, '1', undefined],
  ])('status %i with Retry-After %j waits %j ms', (status, header, expected) => {
    expect(retryAfterMs(status, header)).toBe(expected);
  });
});

describe('KubeHttp and Retry-After', () => {
  it('sends a request again after each 429 with Retry-After until it succeeds', async () => {
    open = await fakeServer([
      { status: 429, retryAfter: '0' },
      { status: 429, retryAfter: '0' },
      { status: 200 },
    ]);
    await expect(open.http.request({ method: 'GET', path: '/api/v1/x' })).resolves.toEqual({
      ok: true,
    });
    expect(open.hits()).toBe(3);
  });

  it('fails at once with a Transient error on a 429 without Retry-After (backoff decides)', async () => {
    const fake = await fakeServer([{ status: 429 }, { status: 200 }]);
    open = fake;
    const failure = await fake.http.request({ method: 'GET', path: '/x' }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ClusterError);
    expect(failure).toMatchObject({ kind: 'Transient', status: 429 });
    expect(fake.hits()).toBe(1);
  });

  it('gives up after 10 attempts when the server keeps answering 429', async () => {
    const fake = await fakeServer([{ status: 429, retryAfter: '0' }]);
    open = fake;
    await expect(fake.http.request({ method: 'GET', path: '/x' })).rejects.toMatchObject({
      kind: 'Transient',
      status: 429,
    });
    expect(fake.hits()).toBe(10);
  });

  /**
   * Fake setTimeout only: the Retry-After wait is the one timer of a request, so it starts (and
   * ends) only when a test moves the clock, while the loopback sockets keep real time. A request
   * is then "still waiting" for certain, not because a real sleep happened to be short.
   */
  function fakeRetryAfterClock(): void {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  }

  /** Whether `promise` has settled once every pending callback has run (the clock stays put). */
  async function settled(promise: Promise<unknown>): Promise<boolean> {
    let done = false;
    promise.then(
      () => (done = true),
      () => (done = true),
    );
    await vi.advanceTimersByTimeAsync(0);
    return done;
  }

  /** Resolves when the request listener has seen a reply with `status`. */
  function replied(http: KubeHttp, status: number): Promise<void> {
    return new Promise((resolve) =>
      http.onRequest((_method, _path, _dryRun, seen) => {
        if (seen === status) resolve();
      }),
    );
  }

  it('waits out the Retry-After in full, and stops waiting as soon as the caller aborts', async () => {
    fakeRetryAfterClock();
    const fake = await fakeServer([{ status: 429, retryAfter: '30' }, { status: 200 }]);
    open = fake;
    const throttled = replied(fake.http, 429);
    const controller = new AbortController();
    const pending = fake.http.request({ method: 'GET', path: '/x', signal: controller.signal });
    pending.catch(() => undefined);
    await throttled;
    // 29 s into the 30 s the server asked for: still waiting, nothing sent again.
    await vi.advanceTimersByTimeAsync(29_000);
    expect(await settled(pending)).toBe(false);
    expect(fake.hits()).toBe(1);
    controller.abort();
    expect(await settled(pending)).toBe(true);
    await expect(pending).rejects.toMatchObject({ kind: 'Aborted' });
    expect(fake.hits()).toBe(1);
  });

  it('does not start the Retry-After wait when the caller aborted as the 429 came in', async () => {
    fakeRetryAfterClock();
    const fake = await fakeServer([{ status: 429, retryAfter: '30' }, { status: 200 }]);
    open = fake;
    const controller = new AbortController();
    // The listener runs when the 429's body has arrived, before the wait begins: an abort here
    // fires no 'abort' event during the wait, so the wait must look at the signal itself.
    fake.http.onRequest((_method, _path, _dryRun, status) => {
      if (status === 429) controller.abort();
    });
    const throttled = replied(fake.http, 429);
    const pending = fake.http.request({ method: 'GET', path: '/x', signal: controller.signal });
    pending.catch(() => undefined);
    await throttled;
    expect(controller.signal.aborted).toBe(true);
    // Not a moment of the 30 s has passed on the clock, and the request is over already.
    expect(await settled(pending)).toBe(true);
    await expect(pending).rejects.toMatchObject({ kind: 'Aborted' });
    expect(vi.getTimerCount()).toBe(0);
    expect(fake.hits()).toBe(1);
  });
});

describe('KubeHttp watch streams', () => {
  it('a watch start waits for the rate limit like any request, and is counted as WATCH', async () => {
    open = await fakeServer([{ status: 503, retryAfter: '4' }], { qps: 10, burst: 1 });
    const attempts: string[] = [];
    open.http.onAttempt((verb, status) => attempts.push(`${verb} ${status}`));
    const ended: unknown[] = [];
    const started = performance.now();
    for (let i = 0; i < 3; i++)
      await open.http.stream(
        { path: '/api/v1/configmaps', query: { watch: 'true' } },
        () => undefined,
        (error) => ended.push(error),
      );
    // One token at once, then one every 100 ms: the third start waited about 200 ms.
    expect(performance.now() - started).toBeGreaterThanOrEqual(180);
    await vi.waitFor(() => expect(ended).toHaveLength(3));
    expect(attempts).toEqual(['WATCH 503', 'WATCH 503', 'WATCH 503']);
    // The failure carries the status and how long the server asked to wait.
    expect(ended[0]).toMatchObject({ statusCode: 503, retryAfterMs: 4_000 });
  });
});
