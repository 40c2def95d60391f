// Faults 9-16: the API server fails in each way a real control plane does, while `stencil run`
// (a process, as installed) reaches it through a proxy that plays the fault (support/fault-proxy).
// For each fault, what the operator sends while it lasts is counted at the proxy and by the
// operator's own metrics, and bounded by the list/watch backoff: per informer, no more attempts
// than a run of failures makes in that time (800 ms doubling to 30 s, less jitter). Each informer
// says at most twice (failing, recovered), and every instance converges after the fault heals,
// including ten changed while it lasted. Each fault meets an operator started for it, so its
// backoff starts from scratch as at a first outage: the first two start it while the fault is
// already there (its informers' first lists fail), the others while it runs (its watches are
// cut). With --long, every fault is held 60 s.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIST_WATCH_BACKOFF, mostAttemptsWithin } from '../../../src/framework/backoff.ts';
import { freePort } from '../../../tools/control-plane/control-plane.ts';
import { spawnStencilRun, type StencilProcess } from '../support/stencil-process.ts';
import { eventually } from '../support/operator.ts';
import { countDeletes } from '../support/apiserver-requests.ts';
import { FaultProxy, type Fault } from './support/fault-proxy.ts';
import { Fleet, printFigures, expectNothingLost } from './support/fleet.ts';
import { byLabel, scrape, total, type Scrape } from './support/operator-metrics.ts';
import { ownControlPlane, type OwnPlane } from './support/own-plane.ts';
import { SOAK } from './support/soak.ts';
import { grantTemplateAccount } from '../../../tools/local/operator-identity.ts';

const namespace = 'fault-outage';
let own: OwnPlane;
let proxy: FaultProxy;
let operator: StencilProcess;
let metricsPort: number;
let fleet: Fleet;

/** A new `stencil run`, through the proxy; the one before it (if any) is stopped first. */
async function startOperator(): Promise<void> {
  await stopOperator();
  metricsPort = await freePort();
  operator = spawnStencilRun(
    [
      `--namespaces=${namespace}`,
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      '--health-probe-bind-address=0',
      '--webhook-port=0',
      '--resync-period=3600',
      '--log-level=info',
      '--log-format=json',
    ],
    proxy.kubeconfig(own.plane),
  );
}

async function stopOperator(): Promise<void> {
  const child = operator?.child;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

beforeAll(async () => {
  own = await ownControlPlane(namespace);
  await grantTemplateAccount(own.admin, namespace);
  proxy = await FaultProxy.start(own.plane);
  await startOperator();
  fleet = new Fleet(own.user, namespace, { count: SOAK.instances, mode: 'revert' });
  await fleet.start('outage-Secret-3f9a', SOAK.timeout(120_000));
}, 240_000);

afterAll(async () => {
  await stopOperator();
  await proxy?.stop();
  await own?.plane.stop();
});

/** Until the operator has nothing queued and its reconcile count stood still for 2 s. */
async function quiet(): Promise<void> {
  let last = -1;
  let since = Date.now();
  await eventually(
    async () => {
      const scraped = await scrape(metricsPort).catch(() => undefined);
      if (!scraped) return false;
      const count = total(scraped, 'stencil_reconcile_total');
      const depth = total(scraped, 'stencil_workqueue_depth');
      if (count !== last || depth > 0) [last, since] = [count, Date.now()];
      return count > 0 && Date.now() - since >= 2_000;
    },
    'the operator to be quiet',
    60_000,
  );
}

interface LogLine {
  level: string;
  msg: string;
  path?: string;
  labelSelector?: string;
}

/** What the operator logged since `offset` (a length of its output). */
function logsSince(offset: number): LogLine[] {
  return operator.output
    .slice(offset)
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

/** The informer a log line is about, named as the metrics name it. */
const informerOf = (line: LogLine): string =>
  line.labelSelector ? `${line.path}?labelSelector=${line.labelSelector}` : (line.path ?? '');

/** How many lines of each informer say `message`. */
function countBy(lines: LogLine[], message: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of lines.filter((l) => l.msg.startsWith(message)))
    counts.set(informerOf(line), (counts.get(informerOf(line)) ?? 0) + 1);
  return counts;
}

/** Each series' increase from `before` to `after`. */
function increase(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  return new Map([...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)]));
}

const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Until every informer lists and watches again: each resumes at its next attempt, at most the
 * backoff's cap (30 s) after the fault healed.
 */
async function allInformersHealthy(): Promise<void> {
  await eventually(
    async () =>
      [
        ...byLabel(
          await scrape(metricsPort),
          'stencil_informer_failing_since_seconds',
          'informer',
        ).values(),
      ].every((since) => since === 0),
    'every informer healthy again',
    LIST_WATCH_BACKOFF.maxMs + 10_000,
  );
}

interface Scenario {
  name: string;
  fault: Fault;
  /** How long it is held by default (--long: 60 s). */
  holdMs: number;
  /** The instances must converge this soon after it heals. */
  convergeMs: number;
  /** The requests it brings are counted at the proxy (else by the operator's metrics only). */
  countedAtProxy: boolean;
  /** The operator starts while the fault is there, rather than meeting it while it runs. */
  startsDuringFault?: boolean;
  /**
   * kube-apiserver itself is killed and started again after the hold, on the same port and data,
   * with a new watch cache (watches resumed from before answer 410); the proxy passes through.
   * The owners change once it is back.
   */
  restartsApiserver?: boolean;
}

const MINUTE = 60_000;
const SHORT = SOAK.long ? MINUTE : 15_000;

const SCENARIOS: Scenario[] = [
  {
    name: '503 to every request',
    fault: { kind: 'status', status: 503 },
    holdMs: MINUTE,
    convergeMs: 35_000,
    countedAtProxy: true,
    startsDuringFault: true,
  },
  {
    name: 'connections refused',
    fault: { kind: 'refused' },
    holdMs: MINUTE,
    convergeMs: 35_000,
    countedAtProxy: false,
    startsDuringFault: true,
  },
  {
    name: 'TLS handshake failure',
    fault: { kind: 'tls' },
    holdMs: SHORT,
    convergeMs: 35_000,
    countedAtProxy: false,
  },
  {
    name: '500 to every request',
    fault: { kind: 'status', status: 500 },
    holdMs: SHORT,
    convergeMs: 35_000,
    countedAtProxy: true,
  },
  {
    name: '429 with Retry-After: 5',
    fault: { kind: 'status', status: 429, retryAfter: 5 },
    holdMs: SHORT,
    convergeMs: 35_000,
    countedAtProxy: true,
  },
  {
    name: 'hang (streams stall, nothing answered), then a restart',
    fault: { kind: 'hang' },
    holdMs: SHORT,
    convergeMs: 35_000,
    countedAtProxy: true,
  },
  {
    name: 'API server killed, started again after the hold (new watch cache)',
    fault: { kind: 'none' },
    holdMs: SHORT,
    convergeMs: 35_000,
    countedAtProxy: true,
    restartsApiserver: true,
  },
  {
    name: 'slow: every answer 2 s late',
    fault: { kind: 'slow', delayMs: 2_000 },
    holdMs: SHORT,
    convergeMs: 60_000,
    countedAtProxy: true,
  },
];

let cycle = 0;

for (const scenario of SCENARIOS) {
  it(
    `sends a bounded number of requests during ${scenario.name}, says so once, and converges`,
    async () => {
      cycle++;
      const deletesBefore = await countDeletes(own.endpoint(), ['configmaps']);
      const handshakesBefore = proxy.badHandshakes.length;
      let before: Scrape = new Map();
      let start: number;
      let logOffset = 0;
      if (scenario.startsDuringFault) {
        await stopOperator();
        start = Date.now();
        await proxy.set(scenario.fault);
        await startOperator();
      } else {
        if (cycle > 1) await startOperator();
        await quiet();
        await fleet.awaitConverged('the fleet before the fault', 60_000);
        await allInformersHealthy();
        before = await scrape(metricsPort);
        logOffset = operator.output.length;
        start = Date.now();
        if (scenario.restartsApiserver)
          await own.plane.restartApiserver('SIGKILL', scenario.holdMs);
        else await proxy.set(scenario.fault);
      }
      // Ten owners change while the API server is sick (straight to it, not through the proxy),
      // or, when it was down, once it is back.
      const changed = fleet.names().slice(10 * (cycle - 1), 10 * cycle);
      await fleet.setColor(changed, `outage-${cycle}`);
      await wait(start + scenario.holdMs - Date.now());
      const during: Scrape = await scrape(metricsPort);
      const seen = proxy.since(start).length;
      // The five of the operator (Templates, instances, revisions, Sets, Namespaces), and once
      // it reconciles, the source and drift watches of the namespace.
      const informers = [
        ...byLabel(during, 'stencil_informer_failing_since_seconds', 'informer').keys(),
      ];
      expect(informers.length).toBeGreaterThanOrEqual(5);
      const handshakes = proxy.badHandshakes.length - handshakesBefore;
      await proxy.set({ kind: 'none' });
      const healed = Date.now();
      const convergeMs = await fleet.awaitConverged(
        `every instance within ${scenario.convergeMs / 1000} s after ${scenario.name} healed`,
        scenario.convergeMs,
      );

      // Per informer, at most the attempts a run of failures makes in the time the fault lasted;
      // a slow server fails nothing, and is sent what the changed instances need (10 each at most).
      const perInformer = mostAttemptsWithin(LIST_WATCH_BACKOFF, scenario.holdMs);
      const bound =
        scenario.fault.kind === 'slow' ? 10 * changed.length : perInformer * informers.length;
      const failures = increase(
        byLabel(before, 'stencil_informer_failures_total', 'informer'),
        byLabel(during, 'stencil_informer_failures_total', 'informer'),
      );
      const attempts =
        total(during, 'stencil_api_requests_total') - total(before, 'stencil_api_requests_total');
      const unanswered =
        total(during, 'stencil_api_requests_total', { code: '0' }) -
        total(before, 'stencil_api_requests_total', { code: '0' });
      const lines = logsSince(logOffset);
      const failing = countBy(lines, 'list/watch failing');
      const recovered = countBy(lines, 'list/watch recovered');
      const seconds = scenario.holdMs / 1000;
      printFigures(scenario.name, {
        heldS: seconds,
        informers: informers.length,
        boundPerInformer: perInformer,
        requestsAtProxy: seen,
        requestsPerSecondAtProxy: (seen / seconds).toFixed(2),
        attemptsByOperator: attempts,
        attemptsPerSecond: (attempts / seconds).toFixed(2),
        unanswered,
        badTlsHandshakes: handshakes,
        mostFailuresOfOneInformer: Math.max(0, ...failures.values()),
        failingLines: [...failing.values()].reduce((a, b) => a + b, 0),
        recoveredLines: [...recovered.values()].reduce((a, b) => a + b, 0),
        convergeAfterHealMs: convergeMs,
      });

      expect(attempts).toBeLessThanOrEqual(bound);
      if (scenario.countedAtProxy) expect(seen).toBeLessThanOrEqual(bound);
      if (scenario.fault.kind === 'tls') expect(handshakes).toBeLessThanOrEqual(bound);
      for (const [informer, count] of failures) {
        // The failure that began the streak (a cut connection) is one more than its requests.
        expect(count, informer).toBeLessThanOrEqual(perInformer + 1);
      }
      for (const [informer, count] of [...failing, ...recovered]) {
        const said = lines.filter((l) => informerOf(l) === informer).map((l) => JSON.stringify(l));
        expect(count, `log lines of ${informer}:\n${said.join('\n')}`).toBeLessThanOrEqual(1);
      }
      const loud = lines.filter((l) => l.level === 'warn' || l.level === 'error');
      expect(loud.length).toBeLessThanOrEqual(informers.length);
      if (scenario.fault.kind === 'slow') expect(Math.max(0, ...failures.values())).toBe(0);
      else {
        // Every informer noticed, and says it recovered.
        expect(failing.size).toBe(informers.length);
        await allInformersHealthy();
        expect([...countBy(logsSince(logOffset), 'list/watch recovered').keys()].sort()).toEqual(
          [...failing.keys()].sort(),
        );
      }
      expectNothingLost({
        deletes: (await countDeletes(own.endpoint(), ['configmaps'])) - deletesBefore,
        lostUpdates: 0, // every change made during the fault was checked by awaitConverged
        leaks: await fleet.leaks([operator.output]),
      });
      expect(operator.child.exitCode).toBeNull();
      expect(healed - start).toBeGreaterThanOrEqual(scenario.holdMs);
    },
    scenario.holdMs + scenario.convergeMs + 120_000,
  );
}
