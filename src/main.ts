// `stencil run`: the composition root of the operator process — config, logger, connection,
// operator — and its lifecycle: start, then on SIGTERM/SIGINT stop taking work, finish in-flight
// reconciles (bounded) and exit 0.
import { hostname } from 'node:os';
import { existsSync, readFileSync } from 'node:fs';
import { loadConfig, type OperatorConfig } from './config.ts';
import { connect } from './kube/connection.ts';
import { createLogger, type Logger } from './log.ts';
import { StencilOperator, type WebhookOptions } from './operator.ts';

/** How long in-flight reconciles may run after SIGTERM. */
const SHUTDOWN_GRACE_MS = 20_000;

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The operator's own namespace: the flag, else the in-cluster ServiceAccount's, else stencil-system. */
function operatorNamespace(config: OperatorConfig): string {
  if (config.operatorNamespace) return config.operatorNamespace;
  return existsSync(SERVICE_ACCOUNT_NAMESPACE)
    ? readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim()
    : 'stencil-system';
}

function webhookOptions(config: OperatorConfig, log: Logger): WebhookOptions | undefined {
  if (config.webhookPort === 0) return undefined;
  const endpoint = config.webhookUrl
    ? { url: config.webhookUrl }
    : config.webhookService
      ? { service: config.webhookService }
      : undefined;
  if (!endpoint) {
    log.warn('strict-mode webhook disabled: set --webhook-service (in a cluster) or --webhook-url');
    return undefined;
  }
  return { endpoint, port: config.webhookPort, namespace: operatorNamespace(config) };
}

export async function runOperator(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const config = loadConfig(argv, env);
  const log = createLogger({ level: config.logLevel, format: config.logFormat });
  const connection = await connect(config.kubeconfig, `stencil-${hostname()}`);
  const operator = new StencilOperator({
    connection,
    namespaces: config.namespaces,
    concurrency: config.concurrency,
    resyncSeconds: config.resyncSeconds,
    log,
    webhook: webhookOptions(config, log),
  });
  await operator.start();
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  log.info('shutting down', { signal });
  await operator.stop(SHUTDOWN_GRACE_MS);
  connection.http.close();
  return 0;
}
