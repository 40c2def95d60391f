// The only reader of command-line flags and STENCIL_* environment variables: produces the frozen
// configuration of `stencil run`. A flag wins over its environment variable.
import { parseArgs } from 'node:util';
import type { LogLevel } from './log.ts';

export interface OperatorConfig {
  kubeconfig?: string;
  /** Namespaces to watch; undefined = all. */
  namespaces?: string[];
  concurrency: number;
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
  /** Namespace of the operator's own objects (the webhook certificate Secret, the Lease). */
  operatorNamespace?: string;
  leaderElect: boolean;
  /** `:8080`, `host:port`, or `0` (disabled). */
  metricsBindAddress: string;
  healthProbeBindAddress: string;
}

export class ConfigError extends Error {}

const OPTIONS = {
  kubeconfig: { type: 'string' },
  namespaces: { type: 'string' },
  concurrency: { type: 'string' },
  'resync-period': { type: 'string' },
  'log-level': { type: 'string' },
  'log-format': { type: 'string' },
  'webhook-port': { type: 'string' },
  'webhook-url': { type: 'string' },
  'webhook-service': { type: 'string' },
  'webhook-cert-dir': { type: 'string' },
  'operator-namespace': { type: 'string' },
  'leader-elect': { type: 'boolean' },
  'metrics-bind-address': { type: 'string' },
  'health-probe-bind-address': { type: 'string' },
} as const;

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new ConfigError(`--${name} must be a positive integer, got "${value}"`);
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

/** Parses `argv` (after `stencil run`) with `env` as fallback. */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv): OperatorConfig {
  let values: Partial<Record<keyof typeof OPTIONS, string | boolean>>;
  try {
    values = parseArgs({ args: argv, options: OPTIONS, strict: true }).values;
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const get = (name: keyof typeof OPTIONS): string | undefined => {
    const value = values[name];
    if (typeof value === 'boolean') return String(value);
    return value ?? env[`STENCIL_${name.toUpperCase().replace(/-/g, '_')}`];
  };
  const namespaces = get('namespaces')
    ?.split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  return Object.freeze({
    kubeconfig: get('kubeconfig') ?? env.KUBECONFIG,
    namespaces: namespaces && namespaces.length > 0 ? namespaces : undefined,
    concurrency: positiveInt('concurrency', get('concurrency'), 8),
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
    operatorNamespace: get('operator-namespace'),
    leaderElect: bool('leader-elect', get('leader-elect')),
    metricsBindAddress: bindAddress('metrics-bind-address', get('metrics-bind-address') ?? ':8080'),
    healthProbeBindAddress: bindAddress(
      'health-probe-bind-address',
      get('health-probe-bind-address') ?? ':8081',
    ),
  });
}
