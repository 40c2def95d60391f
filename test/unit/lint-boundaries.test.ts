// The import boundaries of eslint.config.js hold: each table row lints a one-line import as if it
// were in a given folder, and checks whether no-restricted-imports rejects it.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint();

/** The no-restricted-imports messages for `source` linted as the existing file `filePath`. */
async function restrictedImports(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${source}\nexport const used = x;\n`, { filePath });
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === 'no-restricted-imports' || m.fatal)
    .map((m) => m.message);
}

const reconciler = 'src/reconcile/reader.ts';
const webhook = 'src/webhook/admission.ts';

describe('the reconcile and webhook boundary', { timeout: 60_000 }, () => {
  it.each([
    [reconciler, "import { Informer as x } from '../framework/informer.ts';"],
    [reconciler, "import { WorkQueue as x } from '../framework/work-queue.ts';"],
    [reconciler, "import { OperatorShell as x } from '../framework/operator-shell.ts';"],
    [reconciler, "import { SourceRegistry as x } from '../framework/source-registry.ts';"],
    [reconciler, "import { LeaderElector as x } from '../framework/leader-election.ts';"],
    [reconciler, "import { Controller as x } from '../framework/controller.ts';"],
    [reconciler, "import { KubeCluster as x } from '../kube/cluster.ts';"],
    [reconciler, "import type { KubeHttp as x } from '../kube/http.ts';"],
    [webhook, "import { KubeCluster as x } from '../kube/cluster.ts';"],
  ])('rejects in %s: %s', async (filePath, source) => {
    const messages = await restrictedImports(filePath, source);
    expect(messages).toEqual([
      expect.stringContaining('Reconcilers see ports and framework interfaces'),
    ]);
  });

  it.each([
    [reconciler, "import { TerminalError as x } from '../framework/reconciler.ts';"],
    [reconciler, "import type { DependencyKey as x } from '../framework/dependency-key.ts';"],
    [reconciler, "import { ClusterError as x } from './cluster-port.ts';"],
    [reconciler, "import { resourceKey as x } from '../engine/inventory.ts';"],
  ])('allows in %s: %s', async (filePath, source) => {
    expect(await restrictedImports(filePath, source)).toEqual([]);
  });
});

describe('the operator folder boundary', { timeout: 60_000 }, () => {
  it.each([
    ['src/reconcile/reader.ts', "import { OperatorCaches as x } from '../operator/caches.ts';"],
    [
      'src/framework/informer.ts',
      "import { EventRouter as x } from '../operator/event-routing.ts';",
    ],
    [
      'src/kube/cluster.ts',
      "import { StencilOperator as x } from '../operator/stencil-operator.ts';",
    ],
    ['src/engine/inventory.ts', "import { refreshGauges as x } from '../operator/gauges.ts';"],
    ['src/operator/caches.ts', "import { loadConfig as x } from '../config.ts';"],
    ['src/operator/caches.ts', "import { runOperator as x } from '../main.ts';"],
  ])('rejects in %s: %s', async (filePath, source) => {
    expect(await restrictedImports(filePath, source)).toHaveLength(1);
  });

  it.each([
    ['src/main.ts', "import { StencilOperator as x } from './operator/stencil-operator.ts';"],
    ['src/operator/caches.ts', "import { Informer as x } from '../framework/informer.ts';"],
    ['src/operator/caches.ts', "import { KubeCluster as x } from '../kube/cluster.ts';"],
  ])('allows in %s: %s', async (filePath, source) => {
    expect(await restrictedImports(filePath, source)).toEqual([]);
  });
});
