// `stencil run`: the composition root of the operator process — config, logger, connection,
// operator — and its lifecycle: start, then on SIGTERM/SIGINT stop taking work, finish in-flight
// reconciles (bounded) and exit 0.
import { hostname } from 'node:os';
import { loadConfig } from './config.ts';
import { connect } from './kube/connection.ts';
import { createLogger } from './log.ts';
import { StencilOperator } from './operator.ts';

/** How long in-flight reconciles may run after SIGTERM. */
const SHUTDOWN_GRACE_MS = 20_000;

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
