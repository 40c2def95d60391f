// `npm run bench:preflight` (issue #26): what the change preflight of ADR 0031 costs. A fresh
// control plane and the built operator as its own process; the scale workload's revert Template
// `app` with N instances (--size, default 1,000) in 50 namespaces, converged untimed. Then three
// edits of the Template, each timed from the edit until the preflight's report
// (`status.preflight` of the new revision, Passed or Failed) and until every instance is Ready on
// the new revision, with the API server's count of the requests served in between:
//
//   A. a data key added to the rendered ConfigMap: every instance changes;
//   B. the same again (another value), while a quiet tenant (5 namespaces `quiet-*`, its own
//      Template `quiet`) creates one instance every 0.3 s from the edit until the report (at
//      least 20), each timed from its create request to the watch event that shows it Ready;
//   C. a Handlebars comment: a new revision that renders exactly what every instance has.
//
// Between A and B the quiet tenant makes 20 creations at the same pace with nothing else going
// on: the baseline. Prints the figures and keeps them in bench/results/preflight-<time>.json
// (--json PATH elsewhere). Nothing here asserts a duration.
import { commitOf, quietWorkload } from './fairness-row.ts';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import type { KubeObject } from '../src/api/object-meta.ts';
import type { PreflightStatus, Template, TemplateSpec } from '../src/api/template.ts';
import type { TemplateInstance } from '../src/api/template-instance.ts';
import { API_VERSION, TEMPLATE_INSTANCE_PLURAL, TEMPLATE_PLURAL } from '../src/api/well-known.ts';
import type { KubeCluster } from '../src/kube/cluster.ts';
import { connect } from '../src/kube/connection.ts';
import type { KubeHttp } from '../src/kube/http.ts';
import {
  OPERATOR_RESOURCES,
  requestCounts,
  requestsBetween,
  type RequestSummary,
} from './apiserver-requests.ts';
import { InstanceWatch } from './instance-watch.ts';
import { settled, startOperatorProcess, type OperatorProcess } from './operator-process.ts';
import { total } from './prometheus-text.ts';
import { benchCluster, object, percentile, until, type BenchCluster } from './support.ts';
import {
  CLIENT_CONCURRENCY,
  inParallel,
  instanceObject,
  prepare,
  TEMPLATE_NAMESPACE,
  workload,
  type Workload,
} from './workload.ts';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '1000' },
    /** The quiet tenant's pace, ms between creations. */
    'quiet-every': { type: 'string', default: '300' },
    /** Where the results go; default bench/results/preflight-<time>.json. */
    json: { type: 'string' },
  },
});

const SIZE = Number(values.size.replace(/_/g, ''));
const QUIET_EVERY_MS = Number(values['quiet-every']);
if (!Number.isInteger(SIZE) || SIZE < 1 || !(QUIET_EVERY_MS > 0)) {
  console.error(`--size must be a positive integer and --quiet-every a positive number`);
  process.exit(2);
}
/** Quiet creations at least, in the baseline and beside the preflight. */
const QUIET_MIN = 20;
/** Quiet instances (and their Secrets) prepared; creations stop when they run out. */
const QUIET_POOL = 800;
/** The resources the operator touches here: the scale rows' and the Template's revisions. */
const RESOURCES: ReadonlySet<string> = new Set([...OPERATOR_RESOURCES, 'templaterevisions']);
/** The edit's own request, and the quiet tenant's creations: the benchmark's, not the operator's. */
const benchOwn = (key: string): boolean =>
  key === 'APPLY templates' || key === 'APPLY templateinstances';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const log = (line: string): void =>
  console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);

// ---------------------------------------------------------------------------------------------
// Watches

interface Item {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; generation?: number };
  /** On an ERROR event the object is a Status. */
  code?: number;
}

interface Wait<T> {
  accept: (objects: ReadonlyMap<string, T>, changed: string) => boolean;
  resolve: (at: number) => void;
  reject: (error: Error) => void;
}

const keyOf = (item: Item): string =>
  `${item.metadata?.namespace ?? ''}/${item.metadata?.name ?? ''}`;

/**
 * The benchmark's eyes on one collection: a list, then a watch that resumes where it stopped
 * (from the last resourceVersion, or with a new list after a 410), keeping every object; waits
 * resolve with the performance.now() of the event that satisfied them.
 */
class CollectionWatch<T extends Item> {
  readonly objects = new Map<string, T>();
  private waits: Wait<T>[] = [];
  private stream: { abort(): void } | undefined;
  private resourceVersion = '';
  private gone = false;
  private closed = false;
  private failedInARow = 0;
  restarts = 0;

  private constructor(
    private readonly http: KubeHttp,
    private readonly path: string,
  ) {}

  static async open<T extends Item>(http: KubeHttp, path: string): Promise<CollectionWatch<T>> {
    const watch = new CollectionWatch<T>(http, path);
    await watch.list();
    await watch.watch();
    return watch;
  }

  private async list(): Promise<void> {
    const list = await this.http.request<{ metadata: { resourceVersion: string }; items: T[] }>({
      method: 'GET',
      path: this.path,
    });
    this.objects.clear();
    for (const item of list.items) this.objects.set(keyOf(item), item);
    this.resourceVersion = list.metadata.resourceVersion;
    this.gone = false;
  }

  private async watch(): Promise<void> {
    this.stream = await this.http.stream(
      { path: this.path, query: { watch: '1', resourceVersion: this.resourceVersion } },
      (line) => this.onEvent(line as { type?: string; object?: T }),
      (error) => void this.onEnd(error),
    );
  }

  private onEvent(event: { type?: string; object?: T }): void {
    const item = event.object;
    if (event.type === 'ERROR') {
      if (item?.code === 410) this.gone = true;
      return;
    }
    if (!item?.metadata?.name) return;
    this.failedInARow = 0;
    if (item.metadata.resourceVersion) this.resourceVersion = item.metadata.resourceVersion;
    const key = keyOf(item);
    if (event.type === 'DELETED') this.objects.delete(key);
    else this.objects.set(key, item);
    const at = performance.now();
    this.waits = this.waits.filter((w) => {
      if (!w.accept(this.objects, key)) return true;
      w.resolve(at);
      return false;
    });
  }

  private async onEnd(error: unknown): Promise<void> {
    if (this.closed) return;
    if (this.failedInARow++ < 20) {
      this.restarts += 1;
      try {
        if (this.gone || (error as { statusCode?: number } | null)?.statusCode === 410)
          await this.list();
        if (!this.closed) await this.watch();
        return;
      } catch (retryError) {
        await sleep(200);
        return this.onEnd(retryError);
      }
    }
    const ended = new Error(`the watch of ${this.path} ended`);
    for (const w of this.waits) w.reject(ended);
    this.waits = [];
  }

  /** Resolves when `accept` holds (now, if it already does), checked again at every event. */
  until(
    accept: (objects: ReadonlyMap<string, T>, changed: string) => boolean,
    what: string,
    timeoutMs: number,
  ): Promise<number> {
    if (accept(this.objects, '')) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waits = this.waits.filter((w) => w !== wait);
        reject(new Error(`${what} not seen within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      const wait: Wait<T> = {
        accept,
        resolve: (at) => {
          clearTimeout(timer);
          resolve(at);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.waits.push(wait);
    });
  }

  close(): void {
    this.closed = true;
    this.stream?.abort();
  }
}

type InstanceItem = TemplateInstance & Item;
type TemplateItem = Template & Item;

/** The main instances (namespaces `bench-*`) Ready on `revision`, as of their current spec. */
function onRevision(objects: ReadonlyMap<string, InstanceItem>, revision: number): number {
  let n = 0;
  for (const [key, i] of objects)
    if (
      key.startsWith('bench-') &&
      i.status?.revision === revision &&
      i.status.phase === 'Ready' &&
      i.status.observedGeneration === i.metadata.generation
    )
      n++;
  return n;
}

/** The main instances that show `revision` as the Template's newest (`status.latestRevision`). */
function recorded(objects: ReadonlyMap<string, InstanceItem>, revision: number): number {
  let n = 0;
  for (const [key, i] of objects)
    if (key.startsWith('bench-') && (i.status?.latestRevision ?? 0) >= revision) n++;
  return n;
}

// ---------------------------------------------------------------------------------------------
// The quiet tenant

/** One quiet creation. Times in ms; `at` counts from the start of its phase. */
interface QuietSample {
  namespace: string;
  name: string;
  at: number;
  /** From just before the create request to the watch event that showed it Ready. */
  ms: number;
  /** Started before the preflight's report was seen (always false in the baseline). */
  duringPreflight: boolean;
  /**
   * Started before every main instance had recorded the new revision as its latestRevision:
   * while the instance passes the edit itself causes were running (always false in the baseline).
   */
  duringPasses: boolean;
}

/** A quiet instance renders the quiet tenant's own Template, which no edit here touches. */
function quietInstance(w: Workload, k: number): KubeObject {
  const base = instanceObject(w, k) as unknown as { spec: Record<string, unknown> };
  return object({
    ...base,
    spec: { ...base.spec, templateRef: { name: 'quiet', namespace: TEMPLATE_NAMESPACE } },
  });
}

class QuietTenant {
  created = 0;
  poolExhausted = false;
  private samples: QuietSample[] = [];
  private tasks: Promise<void>[] = [];
  private failure: Error | undefined;

  constructor(
    private readonly w: Workload,
    private readonly client: KubeCluster,
    /** One watch per quiet namespace, on the quiet tenant's own connection. */
    private readonly watches: Map<string, InstanceWatch>,
  ) {}

  /**
   * Creates one instance every `everyMs` from `start` (a performance.now()) until `stop()` holds
   * and at least QUIET_MIN were created, or the pool runs out. On the clock, not on the previous
   * creation's result: a slow answer never slows the tenant down.
   */
  async run(start: number, everyMs: number, stop: () => boolean): Promise<void> {
    for (let turn = 0; ; turn++) {
      await sleep(Math.max(0, start + turn * everyMs - performance.now()));
      if (this.failure) throw this.failure;
      if (turn >= QUIET_MIN && stop()) return;
      if (this.created >= this.w.size) {
        this.poolExhausted = true;
        return;
      }
      this.create(start);
    }
  }

  private create(start: number): void {
    const k = this.created++;
    const { namespace, name } = this.w.instance(k);
    // Registered before the request, so no event can come before it.
    const ready = this.watches.get(namespace)!.until(namespace, name, 'Ready', 600_000);
    void ready.catch(() => undefined);
    const task = (async (): Promise<void> => {
      const started = performance.now();
      await this.client.apply(quietInstance(this.w, k));
      const at = await ready;
      this.samples.push({
        namespace,
        name,
        at: started - start,
        ms: at - started,
        duringPreflight: false,
        duringPasses: false,
      });
    })();
    this.tasks.push(
      task.catch((error: unknown) => {
        this.failure ??= error instanceof Error ? error : new Error(String(error));
      }),
    );
  }

  /** Waits for every creation started to be Ready; returns their samples and starts afresh. */
  async drain(): Promise<QuietSample[]> {
    await Promise.all(this.tasks);
    if (this.failure) throw this.failure;
    const samples = this.samples.sort((a, b) => a.at - b.at);
    this.samples = [];
    this.tasks = [];
    return samples;
  }
}

// ---------------------------------------------------------------------------------------------
// One edit

interface EditResult {
  label: string;
  what: string;
  revision: number;
  /** Edit → the report of the new revision (phase Passed or Failed). */
  reportSeconds: number;
  /** Edit → the first report of the new revision (Running, or already final). */
  firstReportSeconds: number;
  report: PreflightStatus;
  /**
   * Edit → every main instance shows the new revision as `status.latestRevision`: the passes the
   * edit and the new revision cause (each instance learns of it, still rendering the stable
   * revision) are done. Absent if that was not seen before the rollout ended.
   */
  latestRecordedSeconds?: number;
  /** The preflight's progress: [seconds since the edit, instances checked], at each report. */
  progress: [number, number][];
  /** Edit → every main instance Ready on the new revision. */
  rolloutSeconds: number;
  /** From the edit to the report; the benchmark's own applies left out. */
  preflightRequests: RequestSummary;
  /** From the report until every instance was on the new revision. */
  rolloutRequests: RequestSummary;
  /** Reconciles the operator counted from the edit to the report, by controller. */
  preflightReconciles: { template: number; instance: number };
  /** The operator's longest event-loop delay from the edit to the report, seconds. */
  eventLoopMaxSeconds: number;
  /** Quiet creations (edit B only). */
  quiet?: QuietSample[];
  quietPoolExhausted?: boolean;
  load: [number, number];
}

interface Context {
  cluster: BenchCluster;
  operator: OperatorProcess;
  templates: CollectionWatch<TemplateItem>;
  instances: CollectionWatch<InstanceItem>;
  spec: TemplateSpec;
  size: number;
}

const templateObject = (name: string, spec: TemplateSpec): KubeObject =>
  object({
    apiVersion: API_VERSION,
    kind: 'Template',
    metadata: { name, namespace: TEMPLATE_NAMESPACE },
    spec,
  });

const reconciles = (metrics: string, controller: string): number =>
  total(metrics, 'stencil_reconcile_total', { controller });

const APP_KEY = `${TEMPLATE_NAMESPACE}/app`;

async function edit(
  ctx: Context,
  label: string,
  what: string,
  handlebars: string,
  quiet?: QuietTenant,
): Promise<EditResult> {
  const { cluster, operator, templates, instances } = ctx;
  await settled(operator);
  const revision = (templates.objects.get(APP_KEY)?.status?.latestRevision ?? 0) + 1;
  log(`edit ${label} (${what}): revision ${revision}`);
  const load0 = loadavg()[0] ?? 0;
  // A scrape resets the operator's event-loop maximum: the next one reads the preflight's.
  const metrics0 = await operator.scrape();
  const before = await requestCounts(cluster.plane, RESOURCES);
  let report: PreflightStatus | undefined;
  const progress: [number, number][] = [];
  const reported = templates.until(
    (objects) => {
      const p = objects.get(APP_KEY)?.status?.preflight;
      if (p?.revision !== revision) return false;
      const checked = p.changed + p.unchanged + p.failed;
      if (progress.at(-1)?.[1] !== checked) progress.push([performance.now(), checked]);
      if (p.phase === 'Running') return false;
      report = p;
      return true;
    },
    `the preflight report of revision ${revision}`,
    1_800_000,
  );
  const firstReport = templates.until(
    (objects) => objects.get(APP_KEY)?.status?.preflight?.revision === revision,
    `a preflight of revision ${revision}`,
    1_800_000,
  );
  const rolledOut = instances.until(
    (objects, changed) =>
      (changed === '' || changed.startsWith('bench-')) && onRevision(objects, revision) >= ctx.size,
    `${ctx.size} instances Ready on revision ${revision}`,
    1_800_000,
  );
  const latestRecorded = instances.until(
    (objects, changed) =>
      (changed === '' || changed.startsWith('bench-')) && recorded(objects, revision) >= ctx.size,
    `${ctx.size} instances told of revision ${revision}`,
    1_800_000,
  );
  let reportAt: number | undefined;
  void reported.then((at) => (reportAt = at)).catch(() => undefined);
  // Awaited later: a watch that ends meanwhile must not be an unhandled rejection.
  for (const p of [firstReport, rolledOut, latestRecorded]) void p.catch(() => undefined);
  const started = performance.now();
  await cluster.user.apply(templateObject('app', { ...ctx.spec, handlebars }));
  const quietRun = quiet?.run(started, QUIET_EVERY_MS, () => reportAt !== undefined);
  const at = await reported;
  const atRequests = await requestCounts(cluster.plane, RESOURCES);
  const metrics1 = await operator.scrape();
  log(`edit ${label}: report ${report!.phase} after ${((at - started) / 1000).toFixed(1)} s`);
  const first = await firstReport;
  const rolled = await rolledOut;
  const after = await requestCounts(cluster.plane, RESOURCES);
  const latestAt = await Promise.race([latestRecorded, rolledOut.then(() => undefined)]);
  await quietRun;
  const quietSamples = (await quiet?.drain())?.map((s) => ({
    ...s,
    duringPreflight: started + s.at < at,
    duringPasses: latestAt === undefined || started + s.at < latestAt,
  }));
  log(`edit ${label}: every instance on revision ${revision} after ${sec(rolled - started)}`);
  return {
    label,
    what,
    revision,
    reportSeconds: (at - started) / 1000,
    firstReportSeconds: (first - started) / 1000,
    report: report!,
    ...(latestAt !== undefined ? { latestRecordedSeconds: (latestAt - started) / 1000 } : {}),
    progress: progress.map(([t, n]) => [Math.round(t - started) / 1000, n]),
    rolloutSeconds: (rolled - started) / 1000,
    preflightRequests: requestsBetween(before, atRequests, benchOwn),
    rolloutRequests: requestsBetween(atRequests, after, benchOwn),
    preflightReconciles: {
      template: reconciles(metrics1, 'template') - reconciles(metrics0, 'template'),
      instance: reconciles(metrics1, 'templateinstance') - reconciles(metrics0, 'templateinstance'),
    },
    eventLoopMaxSeconds: total(metrics1, 'stencil_nodejs_eventloop_lag_max_seconds'),
    ...(quiet ? { quiet: quietSamples, quietPoolExhausted: quiet.poolExhausted } : {}),
    load: [load0, loadavg()[0] ?? 0],
  };
}

/** The body with `edition: "<tag>"` added to the rendered ConfigMap's data. */
function withEdition(body: string, tag: string): string {
  const anchor = 'kind: ConfigMap\nmetadata:\n  name: {{instance.name}}\ndata:\n';
  if (!body.includes(anchor)) throw new Error('the workload Template has no ConfigMap to edit');
  return body.replace(anchor, `${anchor}  edition: "${tag}"\n`);
}

// ---------------------------------------------------------------------------------------------
// The run

interface Result {
  measuredAt: string;
  commit: string;
  size: number;
  namespaces: number;
  quietEveryMs: number;
  /** Untimed set-up: the N instances created and Ready on revision 1. */
  prepareSeconds: number;
  baseline: { quiet: QuietSample[]; requests: RequestSummary; load: [number, number] };
  edits: EditResult[];
  watchRestarts: number;
  minutes: number;
}

async function run(size: number): Promise<Result> {
  const measuredAt = new Date().toISOString();
  const began = performance.now();
  const logDir = mkdtempSync(join(tmpdir(), 'stencil-bench-'));
  log(`operator logs in ${logDir}`);
  const cluster = await benchCluster({}, { inProcessOperator: false });
  const w = workload(size);
  const quietW = quietWorkload(QUIET_POOL);
  const quietConnection = await connect(cluster.plane.userKubeconfigPath);
  const closers: { close(): void }[] = [];
  let operator: OperatorProcess | undefined;
  try {
    log(`preparing ${w.namespaces.length} namespaces, ${size} Secrets, the quiet tenant's`);
    await prepare(cluster.user, w);
    await prepare(cluster.user, quietW);
    const app = (await cluster.user.get({
      apiVersion: API_VERSION,
      kind: 'Template',
      name: 'app',
      namespace: TEMPLATE_NAMESPACE,
    })) as unknown as Template;
    // Under sync mode `off` an instance freezes after its first apply and never moves: the
    // preflight would count every one unchanged without a check.
    const spec: TemplateSpec = { ...app.spec, sync: { mode: 'revert' } };
    await cluster.user.apply(templateObject('app', spec));
    await cluster.user.apply(templateObject('quiet', spec));
    operator = await startOperatorProcess({
      kubeconfig: cluster.plane.kubeconfigPath,
      resyncSeconds: 600,
      logPath: join(logDir, `preflight-${size}.log`),
    });
    await settled(operator);
    const templates = await CollectionWatch.open<TemplateItem>(
      cluster.userHttp,
      `/apis/${API_VERSION}/namespaces/${TEMPLATE_NAMESPACE}/${TEMPLATE_PLURAL}`,
    );
    const instances = await CollectionWatch.open<InstanceItem>(
      cluster.userHttp,
      `/apis/${API_VERSION}/${TEMPLATE_INSTANCE_PLURAL}`,
    );
    closers.push(templates, instances);
    const quietWatches = new Map<string, InstanceWatch>();
    for (const namespace of quietW.namespaces) {
      const watch = await InstanceWatch.open(quietConnection.http, namespace);
      closers.push(watch);
      quietWatches.set(namespace, watch);
    }
    const tenant = new QuietTenant(quietW, quietConnection.cluster, quietWatches);

    log(`creating ${size} instances (not timed)`);
    const prepareStart = performance.now();
    await inParallel(size, CLIENT_CONCURRENCY, async (k) => {
      await cluster.user.apply(instanceObject(w, k));
    });
    await until(async () => {
      await sleep(500);
      return onRevision(instances.objects, 1) >= size;
    }, 1_800_000);
    const prepareSeconds = (performance.now() - prepareStart) / 1000;
    log(`${size} instances Ready on revision 1 after ${prepareSeconds.toFixed(1)} s`);
    const ctx: Context = { cluster, operator, templates, instances, spec, size };
    const body = spec.handlebars;

    const edits: EditResult[] = [];
    edits.push(await edit(ctx, 'A', 'a ConfigMap key added', withEdition(body, 'a')));

    await settled(operator);
    log(`quiet baseline: ${QUIET_MIN} creations, nothing else going on`);
    const baseLoad = loadavg()[0] ?? 0;
    const baseBefore = await requestCounts(cluster.plane, RESOURCES);
    await tenant.run(performance.now(), QUIET_EVERY_MS, () => true);
    const baseQuiet = await tenant.drain();
    await settled(operator);
    const baseline = {
      quiet: baseQuiet,
      requests: requestsBetween(
        baseBefore,
        await requestCounts(cluster.plane, RESOURCES),
        benchOwn,
      ),
      load: [baseLoad, loadavg()[0] ?? 0] as [number, number],
    };

    edits.push(
      await edit(ctx, 'B', 'the key changed, quiet tenant beside', withEdition(body, 'b'), tenant),
    );
    edits.push(
      await edit(
        ctx,
        'C',
        'a Handlebars comment: renders the same',
        `{{!-- preflight bench: renders nothing --}}\n${withEdition(body, 'b')}`,
      ),
    );
    return {
      measuredAt,
      commit: commitOf(),
      size,
      namespaces: w.namespaces.length,
      quietEveryMs: QUIET_EVERY_MS,
      prepareSeconds,
      baseline,
      edits,
      watchRestarts:
        templates.restarts +
        instances.restarts +
        [...quietWatches.values()].reduce((n, q) => n + q.restarts, 0),
      minutes: (performance.now() - began) / 60_000,
    };
  } finally {
    for (const c of closers) c.close();
    quietConnection.http.close();
    await operator?.stop();
    await cluster.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// The report

const sec = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const ms = (v: number): string => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(0)} ms`);

function stats(samples: QuietSample[]): string {
  if (samples.length === 0) return '— (0)';
  const v = samples.map((s) => s.ms);
  return `${ms(percentile(v, 50))} / ${ms(percentile(v, 99))} / ${ms(Math.max(...v))} (${samples.length})`;
}

function requests(r: RequestSummary, size: number): string {
  const all = Object.values(r.byKey).reduce((a, b) => a + b, 0);
  const per = (n: number): string => (n / size).toFixed(2);
  return `${all} (${per(all)}/inst.): writes ${r.writes} / dry runs ${r.dryRuns} / GET+LIST ${r.reads} (${per(r.writes)} / ${per(r.dryRuns)} / ${per(r.reads)})`;
}

function byVerb(r: RequestSummary): string {
  return (
    Object.entries(r.byKey)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || '—'
  );
}

/** The instances the preflight had checked by `seconds` after the edit. */
function checkedBy(e: EditResult, seconds: number): string {
  const n = e.progress.filter(([t]) => t <= seconds).at(-1)?.[1] ?? 0;
  return `${n} of ${e.report.total}`;
}

function table(result: Result): string {
  const { edits, size } = result;
  const b = result.baseline;
  const perCreation =
    Object.values(b.requests.byKey).reduce((x, y) => x + y, 0) / Math.max(1, b.quiet.length);
  const rows: [string, (e: EditResult) => string][] = [
    ['Edit', (e) => `${e.label}: ${e.what}`],
    ['New revision', (e) => String(e.revision)],
    [
      'Edit → first report (Running) / final report',
      (e) =>
        `${e.firstReportSeconds.toFixed(1)} s / ${e.reportSeconds.toFixed(1)} s (${e.report.phase})`,
    ],
    [
      'Report: total / changed / unchanged / failed',
      (e) => `${e.report.total} / ${e.report.changed} / ${e.report.unchanged} / ${e.report.failed}`,
    ],
    [
      'Edit → every instance told of the new revision (the passes the edit causes); checked by then',
      (e) =>
        e.latestRecordedSeconds === undefined
          ? '—'
          : `${e.latestRecordedSeconds.toFixed(1)} s; ${checkedBy(e, e.latestRecordedSeconds)}`,
    ],
    ['Edit → every instance Ready on the new revision', (e) => `${e.rolloutSeconds.toFixed(1)} s`],
    ['Requests, edit → report (per instance)', (e) => requests(e.preflightRequests, size)],
    ['Requests, edit → report, by verb', (e) => byVerb(e.preflightRequests)],
    [
      'Reconciles, edit → report: template / instance',
      (e) => `${e.preflightReconciles.template} / ${e.preflightReconciles.instance}`,
    ],
    ['Requests, report → rolled out (per instance)', (e) => requests(e.rolloutRequests, size)],
    ['Requests, report → rolled out, by verb', (e) => byVerb(e.rolloutRequests)],
    ['Operator event-loop max, edit → report', (e) => ms(e.eventLoopMaxSeconds * 1000)],
    [
      'Quiet creation → Ready, started during the preflight: p50 / p99 / max (n)',
      (e) => (e.quiet ? stats(e.quiet.filter((s) => s.duringPreflight)) : ''),
    ],
    [
      '… of which started while the instance passes of the edit ran',
      (e) => (e.quiet ? stats(e.quiet.filter((s) => s.duringPreflight && s.duringPasses)) : ''),
    ],
    [
      '… of which started after those (the preflight alone)',
      (e) => (e.quiet ? stats(e.quiet.filter((s) => s.duringPreflight && !s.duringPasses)) : ''),
    ],
    [
      'Quiet creation → Ready, started after the report (n)',
      (e) => (e.quiet ? stats(e.quiet.filter((s) => !s.duringPreflight)) : ''),
    ],
    [
      'Quiet creations: their own requests are in the counts above (≈ the baseline per creation × n)',
      (e) => (e.quiet ? `${e.quiet.length} → ≈ ${Math.round(e.quiet.length * perCreation)}` : ''),
    ],
    [
      'Load average (1 min) at edit / rolled out',
      (e) => `${e.load[0].toFixed(1)} / ${e.load[1].toFixed(1)}`,
    ],
  ];
  const lines = rows.map(([what, cell]) => `| ${what} | ${edits.map(cell).join(' | ')} |`);
  const head = `| What (N = ${size.toLocaleString('en')}) | ${edits.map((e) => e.label).join(' | ')} |`;
  const rule = `| --- | ${edits.map(() => '---').join(' | ')} |`;
  return [
    head,
    rule,
    ...lines,
    '',
    `Quiet baseline, nothing else running: creation → Ready p50 / p99 / max (n) ${stats(b.quiet)}; ` +
      `requests ${requests(b.requests, b.quiet.length).replace('/inst.', '/creation')}; load ${b.load[0].toFixed(1)} / ${b.load[1].toFixed(1)}`,
    `Prepare (untimed): ${size} instances Ready on revision 1 after ${result.prepareSeconds.toFixed(1)} s; ` +
      `watch restarts ${result.watchRestarts}; commit ${result.commit}; whole run ${result.minutes.toFixed(1)} min`,
  ].join('\n');
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
const result = await run(SIZE);
console.log(table(result));
const stamp = result.measuredAt.replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
const file = values.json ?? join(import.meta.dirname, 'results', `preflight-${stamp}.json`);
mkdirSync(dirname(file), { recursive: true });
writeFileSync(file, JSON.stringify(result, null, 2));
log(`results in ${file}`);
