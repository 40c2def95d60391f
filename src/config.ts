// The only reader of command-line flags and STENCIL_* environment variables: produces the frozen
// configuration of `stencil run`. A flag wins over its environment variable.
import {
  NO_API_ALLOWANCE,
  parseApiAllowance,
  type ApiAllowance,
} from './engine/typed-api/api-names.ts';
import { parseCommandLine, UsageError, type CommandSpec } from './command-line.ts';
import type { TenancyPolicy } from './engine/shared/acting-identity.ts';
import type { LogLevel } from './log.ts';

export interface OperatorConfig {
  kubeconfig?: string;
  /** Namespaces to watch; undefined = all. */
  namespaces?: string[];
  concurrency: number;
  /** Client-side rate limit of requests to the API server (watch starts included); qps 0 = off. */
  kubeQps: number;
  kubeBurst: number;
  /** Every instance and Template is reconciled at least this often. */
  resyncSeconds: number;
  logLevel: LogLevel;
  logFormat: 'json' | 'text';
  /** Port of the strict-mode admission webhook; 0 disables it. */
  webhookPort: number;
  /** How the API server reaches the webhook: a URL (local runs) ... */
  webhookUrl?: string;
  /** ... or a Service `namespace/name[:port]` (in a cluster). */
  webhookService?: { namespace: string; name: string; port: number };
  /** Serve the webhook certificate mounted here (cert-manager) instead of the operator's own. */
  webhookCertDir?: string;
  /**
   * Members of these groups may change strict-mode resources although the webhook would deny it
   * (break glass); empty by default, so only the operator's own username is exempt.
   */
  webhookBreakGlassGroups: string[];
  /**
   * Who owns the webhook configurations (ADR 0023): `install` (the chart and config/deploy pass
   * it) leaves them to the install and keeps only their caBundle; `operator` creates them.
   */
  webhookConfigurations: 'operator' | 'install';
  /**
   * Whose rights a valueFrom read needs (ADR 0020): `operator` (its own, within the Template's
   * reference policy) or `requester` (also those of the user who created the instance, asked
   * with a SubjectAccessReview on every read; needs the admission webhook).
   */
  authorizeSources: 'operator' | 'requester';
  /**
   * Who a Template's requests are made as (ADR 0035): its ServiceAccount (`--act-as
   * service-account`, the default; `--default-service-account` names the one of a Template
   * that names none), or the operator itself (`--act-as operator`: single-team mode).
   */
  tenancy: TenancyPolicy;
  /**
   * Which Template namespaces may publish which API groups (ADR 0032); empty = none may, and
   * the operator does not watch CRDs.
   */
  apiGroups: ApiAllowance;
  /** Namespace of the operator's own objects (the webhook certificate Secret, the Lease). */
  operatorNamespace?: string;
  leaderElect: boolean;
  /**
   * Split the namespaces across replicas (ADR 0015): `auto` by member Leases, or a fixed index
   * of a fixed count; undefined = this replica (or the leader) reconciles everything.
   */
  sharding?: { mode: 'auto' } | { mode: 'static'; index: number; count: number };
  /** Lease duration of the leader and shard member Leases; renewals follow from it. */
  leaseDurationSeconds: number;
  /** A render running longer than this is stopped with RenderTimeout (docs/adr/0018). */
  renderTimeoutSeconds: number;
  /** Worker threads that render; undefined = 2, or 1 on one core. */
  renderWorkers?: number;
  /** `:8080`, `host:port`, or `0` (disabled). */
  metricsBindAddress: string;
  healthProbeBindAddress: string;
}

/** A flag or STENCIL_* variable `stencil run` cannot use: a UsageError (exit code 2). */
export class ConfigError extends UsageError {}

/**
 * Client rate limit defaults (docs/operations.md, docs/benchmarks.md): well above what the
 * operator sends at --concurrency 8 when converging thousands of instances, so it never paces
 * normal work, yet a bound on a runaway loop. controller-runtime's 20/30 would stretch a cold
 * start of 5,000 instances to over half an hour.
 */
export const DEFAULT_KUBE_QPS = 500;
export const DEFAULT_KUBE_BURST = 1000;

/** `stencil run`: its flags with their help lines (SPEC §9, docs/operations.md). */
export const RUN_COMMAND = {
  name: 'run',
  synopsis: '[flags]',
  summary:
    'Runs the operator: reconciles Templates and TemplateInstances, serves the strict-mode webhook.',
  flags: {
    kubeconfig: {
      type: 'string',
      value: 'PATH',
      description: 'kubeconfig file (default $KUBECONFIG, then the in-cluster ServiceAccount)',
    },
    namespaces: {
      type: 'string',
      value: 'a,b',
      description: "namespaces to watch, comma-separated; include the Templates' (default all)",
    },
    concurrency: {
      type: 'string',
      value: 'N',
      description: 'instances reconciled in parallel (default 8)',
    },
    'kube-qps': {
      type: 'string',
      value: 'N',
      description: `requests per second to the API server, watch starts included; 0 = no limit (default ${DEFAULT_KUBE_QPS})`,
    },
    'kube-burst': {
      type: 'string',
      value: 'N',
      description: `requests that may go at once above --kube-qps (default ${DEFAULT_KUBE_BURST})`,
    },
    'resync-period': {
      type: 'string',
      value: 'SECONDS',
      description: 'every instance and Template is reconciled at least this often (default 600)',
    },
    'leader-elect': {
      type: 'boolean',
      description:
        'hold the Lease stencil-leader in the operator namespace; only the holder reconciles',
    },
    shards: {
      type: 'string',
      value: 'auto',
      description:
        'split the namespaces across the replicas that run with it, each holding a member Lease',
    },
    'shard-index': {
      type: 'string',
      value: 'I',
      description: 'or a fixed split: this replica reconciles shard I (0-based) of --shard-count',
    },
    'shard-count': {
      type: 'string',
      value: 'N',
      description: 'the number of fixed shards (with --shard-index)',
    },
    'lease-duration': {
      type: 'string',
      value: 'SECONDS',
      description:
        'leader and shard member Leases expire after this; renewed every 2/15 of it (default 15)',
    },
    'render-timeout': {
      type: 'string',
      value: 'SECONDS',
      description:
        'a render that runs longer is stopped and its instance fails with RenderTimeout (default 5)',
    },
    'render-workers': {
      type: 'string',
      value: 'N',
      description:
        'worker threads that render, beside the reconciles (default: 2, or 1 on one core)',
    },
    'metrics-bind-address': {
      type: 'string',
      value: 'ADDR',
      description: '[host]:port of /metrics; 0 disables (default :8080)',
    },
    'health-probe-bind-address': {
      type: 'string',
      value: 'ADDR',
      description: '[host]:port of /healthz and /readyz; 0 disables (default :8081)',
    },
    'webhook-port': {
      type: 'string',
      value: 'N',
      description: 'port of the strict-mode admission webhook; 0 disables (default 9443)',
    },
    'webhook-service': {
      type: 'string',
      value: 'NS/NAME[:PORT]',
      description: 'the Service through which the API server calls the webhook (in a cluster)',
    },
    'webhook-url': {
      type: 'string',
      value: 'URL',
      description: 'or the URL at which the API server calls the webhook (local runs)',
    },
    'webhook-cert-dir': {
      type: 'string',
      value: 'DIR',
      description: "serve DIR/tls.crt and tls.key (cert-manager) instead of the operator's own",
    },
    'webhook-configurations': {
      type: 'string',
      value: 'OWNER',
      description:
        'operator: create the webhook configurations; install: the chart owns them, set only their caBundle (default operator)',
    },
    'webhook-break-glass-groups': {
      type: 'string',
      value: 'a,b',
      description: 'groups whose members may still change strict-mode resources (default none)',
    },
    'authorize-sources': {
      type: 'string',
      value: 'WHO',
      description:
        "operator, or requester: each valueFrom read also needs the instance creator's rights (default operator)",
    },
    'act-as': {
      type: 'string',
      value: 'WHO',
      description:
        "service-account: a Template's requests are made as its ServiceAccount; operator: as the operator itself, for a single trusted team (default service-account)",
    },
    'default-service-account': {
      type: 'string',
      value: 'NAME',
      description:
        "the ServiceAccount, in a Template's own namespace, of a Template that names none (default none: such a Template is refused)",
    },
    'api-groups': {
      type: 'string',
      value: 'NS=GROUP,...;...',
      description:
        'which namespaces may publish which API groups through Templates (typed APIs, ADR 0032; default none)',
    },
    'operator-namespace': {
      type: 'string',
      value: 'NS',
      description: "namespace of the Lease and the webhook Secret (default the ServiceAccount's)",
    },
    'log-level': {
      type: 'string',
      value: 'LEVEL',
      description: 'debug, info, warn or error (default info)',
    },
    'log-format': { type: 'string', value: 'FORMAT', description: 'json or text (default json)' },
  },
  notes: [
    'Every flag can also be set as STENCIL_<FLAG> in the environment (--log-level as',
    'STENCIL_LOG_LEVEL); a flag wins. See docs/operations.md.',
  ],
} as const satisfies CommandSpec;

type RunFlag = keyof typeof RUN_COMMAND.flags;

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new ConfigError(`--${name} must be a positive integer, got "${value}"`);
  return n;
}

function nonNegativeNumber(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new ConfigError(`--${name} must be a number ≥ 0, got "${value}"`);
  return n;
}

function positiveNumber(name: string, value: string | undefined, fallback: number): number {
  const n = nonNegativeNumber(name, value, fallback);
  if (n === 0) throw new ConfigError(`--${name} must be a number > 0, got "${value}"`);
  return n;
}

function port(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new ConfigError(`--${name} must be a port number (0 disables), got "${value}"`);
  return n;
}

function service(value: string | undefined): OperatorConfig['webhookService'] {
  if (value === undefined) return undefined;
  const match = /^([a-z0-9-]+)\/([a-z0-9-]+)(?::(\d+))?$/.exec(value);
  if (!match)
    throw new ConfigError(`--webhook-service must be namespace/name[:port], got "${value}"`);
  return { namespace: match[1]!, name: match[2]!, port: Number(match[3] ?? 443) };
}

function bool(name: string, value: string | undefined): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === '' || value === 'true') return true;
  throw new ConfigError(`--${name} must be true or false, got "${value}"`);
}

function bindAddress(name: string, value: string): string {
  if (value === '0' || /^[^:]*:\d+$/.test(value)) return value;
  throw new ConfigError(`--${name} must be [host]:port or 0, got "${value}"`);
}

function oneOf<T extends string>(
  name: string,
  value: string | undefined,
  allowed: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value))
    throw new ConfigError(`--${name} must be one of ${allowed.join(', ')}, got "${value}"`);
  return value as T;
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function sharding(
  get: (name: RunFlag) => string | undefined,
  leaderElect: boolean,
): OperatorConfig['sharding'] {
  const shards = get('shards');
  const index = get('shard-index');
  const count = get('shard-count');
  if (shards !== undefined) {
    if (shards !== 'auto') throw new ConfigError(`--shards must be auto, got "${shards}"`);
    if (index !== undefined || count !== undefined)
      throw new ConfigError('--shards auto and --shard-index/--shard-count exclude each other');
    if (leaderElect)
      throw new ConfigError(
        '--shards auto and --leader-elect exclude each other: every shard member reconciles',
      );
    return { mode: 'auto' };
  }
  if (index === undefined && count === undefined) return undefined;
  if (index === undefined || count === undefined)
    throw new ConfigError('--shard-index and --shard-count go together');
  const n = positiveInt('shard-count', count, 1);
  const i = Number(index);
  if (!Number.isInteger(i) || i < 0 || i >= n)
    throw new ConfigError(`--shard-index must be an integer from 0 to ${n - 1}, got "${index}"`);
  return { mode: 'static', index: i, count: n };
}

/** Requester mode records requesters through the admission webhook, so it cannot run without it. */
function apiGroups(text: string | undefined): ApiAllowance {
  if (text === undefined) return NO_API_ALLOWANCE;
  const parsed = parseApiAllowance(text);
  if (!parsed.ok)
    throw new ConfigError(`--api-groups: ${parsed.problems.map((p) => p.message).join('; ')}`);
  return parsed.value;
}

function authorizeSources(
  get: (name: RunFlag) => string | undefined,
): OperatorConfig['authorizeSources'] {
  const mode = oneOf(
    'authorize-sources',
    get('authorize-sources'),
    ['operator', 'requester'] as const,
    'operator',
  );
  const webhook = port('webhook-port', get('webhook-port'), 9443) !== 0;
  if (mode === 'requester' && (!webhook || !(get('webhook-url') ?? get('webhook-service'))))
    throw new ConfigError(
      '--authorize-sources=requester needs the admission webhook, which records who created each instance: set --webhook-service (or --webhook-url) and keep --webhook-port above 0',
    );
  return mode;
}

/** A DNS-1123 subdomain, as a ServiceAccount's name is. */
const SERVICE_ACCOUNT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function tenancy(get: (name: RunFlag) => string | undefined): TenancyPolicy {
  const actAs = oneOf(
    'act-as',
    get('act-as'),
    ['service-account', 'operator'] as const,
    'service-account',
  );
  const name = get('default-service-account');
  if (name !== undefined && (name.length > 253 || !SERVICE_ACCOUNT_NAME.test(name)))
    throw new ConfigError(
      `--default-service-account must be a ServiceAccount name (lower-case letters, digits, '-' and '.'), got "${name}"`,
    );
  return { actAs, ...(name ? { defaultServiceAccount: name } : {}) };
}

/** Parses `argv` (after `stencil run`) with `env` as fallback. */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv): OperatorConfig {
  let values: Readonly<Record<string, unknown>>;
  try {
    values = parseCommandLine(RUN_COMMAND, argv).values;
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const get = (name: RunFlag): string | undefined => {
    const value = values[name];
    if (typeof value === 'boolean') return String(value);
    if (typeof value === 'string') return value;
    return env[`STENCIL_${name.toUpperCase().replace(/-/g, '_')}`];
  };
  const namespaces = list(get('namespaces'));
  return Object.freeze({
    kubeconfig: get('kubeconfig') ?? env.KUBECONFIG,
    namespaces: namespaces.length > 0 ? namespaces : undefined,
    concurrency: positiveInt('concurrency', get('concurrency'), 8),
    kubeQps: nonNegativeNumber('kube-qps', get('kube-qps'), DEFAULT_KUBE_QPS),
    kubeBurst: positiveInt('kube-burst', get('kube-burst'), DEFAULT_KUBE_BURST),
    resyncSeconds: positiveInt('resync-period', get('resync-period'), 600),
    logLevel: oneOf(
      'log-level',
      get('log-level'),
      ['debug', 'info', 'warn', 'error'] as const,
      'info',
    ),
    logFormat: oneOf('log-format', get('log-format'), ['json', 'text'] as const, 'json'),
    webhookPort: port('webhook-port', get('webhook-port'), 9443),
    webhookUrl: get('webhook-url'),
    webhookService: service(get('webhook-service')),
    webhookCertDir: get('webhook-cert-dir'),
    webhookBreakGlassGroups: list(get('webhook-break-glass-groups')),
    webhookConfigurations: oneOf(
      'webhook-configurations',
      get('webhook-configurations'),
      ['operator', 'install'] as const,
      'operator',
    ),
    authorizeSources: authorizeSources(get),
    tenancy: tenancy(get),
    apiGroups: apiGroups(get('api-groups')),
    operatorNamespace: get('operator-namespace'),
    leaderElect: bool('leader-elect', get('leader-elect')),
    sharding: sharding(get, bool('leader-elect', get('leader-elect'))),
    leaseDurationSeconds: positiveInt('lease-duration', get('lease-duration'), 15),
    renderTimeoutSeconds: positiveNumber('render-timeout', get('render-timeout'), 5),
    renderWorkers:
      get('render-workers') === undefined
        ? undefined
        : positiveInt('render-workers', get('render-workers'), 1),
    metricsBindAddress: bindAddress('metrics-bind-address', get('metrics-bind-address') ?? ':8080'),
    healthProbeBindAddress: bindAddress(
      'health-probe-bind-address',
      get('health-probe-bind-address') ?? ':8081',
    ),
  });
}
