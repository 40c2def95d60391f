// The import boundaries of .dependency-cruiser.mjs hold at any folder depth. Each row lays out a
// throw-away tree outside the repository (the importing file, the file it imports, node_modules
// linked in), cruises it with the project's own rules and checks which rules reject the import.
// The last test runs the depcruise command of `npm run lint` itself on such a tree.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, resolve } from 'node:path';
import { cruise, type ICruiseOptions, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '../..');
const CONFIG = '.dependency-cruiser.mjs';

let options: ICruiseOptions;
const trees: string[] = [];

beforeAll(async () => {
  options = await extractDepcruiseOptions(join(REPO, CONFIG));
});

afterEach(() => {
  for (const tree of trees.splice(0)) rmSync(tree, { recursive: true, force: true });
});

/** A tree under the system's temporary folder holding `files`, removed after the test. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'stencil-lint-probe-'));
  trees.push(root);
  symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'), 'dir');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/**
 * The names of the rules that reject the imports of `from`, cruising src/ of `root`. Read per
 * import rather than from the summary, which names a cycle once, at one of its modules.
 */
async function rulesBroken(root: string, from: string): Promise<string[]> {
  const { output } = await cruise(['src'], { ...options, baseDir: root });
  return (output as ICruiseResult).modules
    .filter((m) => m.source === from)
    .flatMap((m) => m.dependencies.flatMap((d) => (d.rules ?? []).map((r) => r.name)))
    .sort();
}

/** The rules broken by `statement` in the file `importer`; a relative import's target exists. */
async function rulesBrokenBy(importer: string, statement: string): Promise<string[]> {
  const specifier = /(?:from |import\()'([^']+)'/.exec(statement)?.[1] ?? '';
  const files: Record<string, string> = {
    [importer]: `${statement}\nexport const used = 1;\n`,
  };
  if (specifier.startsWith('.'))
    files[posix.join(posix.dirname(importer), specifier)] = 'export const x = 1;\n';
  return rulesBroken(tree(files), importer);
}

/** Deep below src/engine: the rules hold at any depth, not only one folder down. */
const nested = 'src/engine/__lint_probe__/deep/probe.ts';
/** Below the engine's shared leaf, which imports only itself and api/. */
const sharedLeaf = 'src/engine/shared/__lint_probe__/probe.ts';
const reconciler = 'src/reconcile/reader.ts';
const webhook = 'src/webhook/admission.ts';

describe('the engine and api are pure, at any depth', () => {
  it.each([
    [nested, "import { KubeCluster as x } from '../../../kube/cluster.ts';", ['engine-is-pure']],
    [
      nested,
      "import { Informer as x } from '../../../framework/watches/informer.ts';",
      ['engine-is-pure'],
    ],
    [
      nested,
      "import { applyPlan as x } from '../../../reconcile/instance/applier.ts';",
      ['engine-is-pure'],
    ],
    [nested, "import { x } from '../../../webhook/admission.ts';", ['engine-is-pure']],
    [
      nested,
      "import { x } from '../../../operator/gauges.ts';",
      ['engine-is-pure', 'operator-only-from-main'],
    ],
    [nested, "import { x } from '../../../cli/render-command.ts';", ['engine-is-pure']],
    [
      nested,
      "import { x } from '../../../config.ts';",
      ['config-only-from-entry-points', 'engine-is-pure'],
    ],
    [
      nested,
      "import { x } from '../../../main.ts';",
      ['engine-is-pure', 'main-only-from-command-table'],
    ],
    [nested, "import type { Logger as x } from '../../../log.ts';", ['engine-is-pure']],
    [nested, "import { readFileSync as x } from 'node:fs';", ['engine-and-api-do-no-io']],
    [nested, "import { readFile as x } from 'node:fs/promises';", ['engine-and-api-do-no-io']],
    [nested, "import { request as x } from 'https';", ['engine-and-api-do-no-io']],
    [nested, "import { cpus as x } from 'node:os';", ['engine-and-api-do-no-io']],
    [nested, "import { env as x } from 'node:process';", ['engine-and-api-do-no-io']],
    [nested, "import { Worker as x } from 'node:worker_threads';", ['engine-and-api-do-no-io']],
    [
      nested,
      "import { KubeConfig as x } from '@kubernetes/client-node';",
      ['client-node-only-in-kube-and-framework'],
    ],
    [
      nested,
      "import type { V1Pod as x } from '@kubernetes/client-node';",
      ['client-node-only-in-kube-and-framework'],
    ],
    [nested, "import x from '@dot-i/k8s-operator';", ['dot-i-only-in-framework']],
    [nested, "import { pino as x } from 'pino';", ['engine-and-api-use-no-process-services']],
    [
      'src/api/v2/probe.ts',
      "import { x } from '../../engine/objects/inventory.ts';",
      ['api-is-the-contract'],
    ],
    [
      'src/api/v2/probe.ts',
      "import { connect as x } from 'node:net';",
      ['engine-and-api-do-no-io'],
    ],
    [sharedLeaf, "import { x } from '../../render/render.ts';", ['engine-shared-is-a-leaf']],
    [
      sharedLeaf,
      "import type { KindScope as x } from '../../objects/resource-scope.ts';",
      ['engine-shared-is-a-leaf'],
    ],
    [
      'src/engine/render/probe.ts',
      "import { x } from '../evaluation/instance-evaluation.ts';",
      ['engine-concerns-point-down'],
    ],
    [
      'src/engine/objects/__lint_probe__/probe.ts',
      "import type { SourcePort as x } from '../../sources/source-port.ts';",
      ['engine-concerns-point-down'],
    ],
    [
      'src/engine/evaluation/probe.ts',
      "import { x } from '../pass/decision.ts';",
      ['engine-concerns-point-down'],
    ],
  ])('rejects in %s: %s', async (importer, statement, rules) => {
    expect(await rulesBrokenBy(importer, statement)).toEqual(rules);
  });

  it.each([
    [nested, "import { resourceKey as x } from '../../objects/inventory.ts';"],
    [nested, "import type { Template as x } from '../../../api/template.ts';"],
    [nested, "import { createHash as x } from 'node:crypto';"],
    [nested, "import { parse as x } from 'yaml';"],
    [sharedLeaf, "import { canonicalJson as x } from '../canonical-json.ts';"],
    [sharedLeaf, "import type { LabelSelector as x } from '../../../api/object-meta.ts';"],
    ['src/engine/render/probe.ts', "import { x } from '../health/observed.ts';"],
    ['src/engine/pass/__lint_probe__/probe.ts', "import { x } from '../../shared/problem.ts';"],
    [
      'src/engine/sources/probe.ts',
      "import type { KindScope as x } from '../objects/resource-scope.ts';",
    ],
  ])('allows in %s: %s', async (importer, statement) => {
    expect(await rulesBrokenBy(importer, statement)).toEqual([]);
  });

  it('finds an import cycle deep below src/engine, also of type-only imports', async () => {
    const a = 'src/engine/__lint_probe__/deep/a.ts';
    const b = 'src/engine/__lint_probe__/deep/b.ts';
    const runtime = tree({
      [a]: "import { b } from './b.ts';\nexport const a = (): number => b + 1;\n",
      [b]: "import { a } from './a.ts';\nexport const b = 1;\nexport const c = a;\n",
    });
    expect(await rulesBroken(runtime, a)).toEqual(['no-circular']);
    const types = tree({
      [a]: "import type { B } from './b.ts';\nexport interface A { b?: B }\n",
      [b]: "import type { A } from './a.ts';\nexport interface B { a?: A }\n",
    });
    expect(await rulesBroken(types, b)).toEqual(['no-circular']);
  });
});

describe('the reconcile and webhook boundary', () => {
  it.each([
    [
      reconciler,
      "import { Informer as x } from '../framework/watches/informer.ts';",
      'reconcile-sees-ports',
    ],
    [
      reconciler,
      "import { WorkQueue as x } from '../framework/work-queue.ts';",
      'reconcile-sees-ports',
    ],
    [
      reconciler,
      "import { OperatorShell as x } from '../framework/watches/operator-shell.ts';",
      'reconcile-sees-ports',
    ],
    [
      reconciler,
      "import { SourceRegistry as x } from '../framework/watches/source-registry.ts';",
      'reconcile-sees-ports',
    ],
    [
      reconciler,
      "import { LeaderElector as x } from '../framework/coordination/leader-election.ts';",
      'reconcile-sees-ports',
    ],
    [
      reconciler,
      "import { Controller as x } from '../framework/controller.ts';",
      'reconcile-sees-ports',
    ],
    [reconciler, "import { KubeCluster as x } from '../kube/cluster.ts';", 'reconcile-sees-ports'],
    [reconciler, "import type { KubeHttp as x } from '../kube/http.ts';", 'reconcile-sees-ports'],
    [reconciler, "import { x } from '../webhook/strict-webhook.ts';", 'reconcile-sees-ports'],
    [
      reconciler,
      "import type { StencilMetrics as x } from '../metrics.ts';",
      'reconcile-sees-ports',
    ],
    [
      'src/reconcile/deep/probe.ts',
      "import { x } from '../../kube/cluster.ts';",
      'reconcile-sees-ports',
    ],
    [webhook, "import { KubeCluster as x } from '../kube/cluster.ts';", 'webhook-sees-ports'],
    [
      webhook,
      "import { Informer as x } from '../framework/watches/informer.ts';",
      'webhook-sees-ports',
    ],
  ])('rejects in %s: %s', async (importer, statement, rule) => {
    expect(await rulesBrokenBy(importer, statement)).toEqual([rule]);
  });

  it.each([
    [reconciler, "import { TerminalError as x } from '../framework/reconciler.ts';"],
    [reconciler, "import type { DependencyKey as x } from '../framework/dependency-key.ts';"],
    [reconciler, "import { ClusterError as x } from './cluster-port.ts';"],
    [reconciler, "import { resourceKey as x } from '../engine/objects/inventory.ts';"],
    [webhook, "import type { ClusterPort as x } from '../reconcile/cluster-port.ts';"],
  ])('allows in %s: %s', async (importer, statement) => {
    expect(await rulesBrokenBy(importer, statement)).toEqual([]);
  });
});

describe('the framework, kube/ and the offline commands', () => {
  it.each([
    [
      'src/framework/watches/informer.ts',
      "import { x } from '../../api/well-known.ts';",
      ['framework-knows-nothing-built-on-it'],
    ],
    [
      'src/framework/watches/informer.ts',
      "import { x } from '../../engine/render/render-job.ts';",
      ['framework-knows-nothing-built-on-it'],
    ],
    [
      'src/framework/watches/informer.ts',
      "import { x } from '../../reconcile/cluster-port.ts';",
      ['framework-knows-nothing-built-on-it'],
    ],
    [
      'src/framework/watches/informer.ts',
      "import { x } from '../../kube/http.ts';",
      ['framework-knows-nothing-built-on-it'],
    ],
    ['src/kube/cluster.ts', "import x from '@dot-i/k8s-operator';", ['dot-i-only-in-framework']],
    [
      'src/kube/cluster.ts',
      "import { x } from '../reconcile/instance/applier.ts';",
      ['kube-implements-ports'],
    ],
    ['src/kube/cluster.ts', "import { x } from '../webhook/server.ts';", ['kube-implements-ports']],
    [
      'src/cli/probe.ts',
      "import { x } from '../reconcile/instance/applier.ts';",
      ['offline-cli-commands'],
    ],
    ['src/cli/probe.ts', "import { x } from '../kube/cluster.ts';", ['offline-cli-commands']],
    [
      'src/cli/probe.ts',
      "import { x } from '../framework/watches/informer.ts';",
      ['offline-cli-commands'],
    ],
    [
      'src/cli/probe.ts',
      "export const load = (): Promise<unknown> => import('../operator/stencil-operator.ts');",
      ['offline-cli-commands', 'operator-only-from-main'],
    ],
    ['src/cli/probe.ts', "import { x } from '../cli.ts';", ['cli-entry-is-not-imported']],
    [
      'src/config.ts',
      "import { x } from './cli/render-command.ts';",
      ['config-below-the-commands'],
    ],
    [
      'src/command-line.ts',
      "import { x } from './cli/manifest-files.ts';",
      ['command-line-is-a-leaf'],
    ],
    [
      'src/log.ts',
      "import { x } from './operator/watches/caches.ts';",
      ['operator-only-from-main', 'process-services-below-the-operator'],
    ],
  ])('rejects in %s: %s', async (importer, statement, rules) => {
    expect(await rulesBrokenBy(importer, statement)).toEqual(rules);
  });

  it.each([
    [
      'src/framework/watches/informer.ts',
      "import type { KubeObject as x } from '../../api/object-meta.ts';",
    ],
    ['src/framework/watches/operator-shell.ts', "import x from '@dot-i/k8s-operator';"],
    [
      'src/framework/watches/informer.ts',
      "import { KubeConfig as x } from '@kubernetes/client-node';",
    ],
    ['src/kube/cluster.ts', "import { ClusterError as x } from '../reconcile/cluster-port.ts';"],
    [
      'src/kube/list-watch.ts',
      "import type { ListWatchSource as x } from '../framework/watches/informer.ts';",
    ],
    ['src/kube/http.ts', "import { KubeConfig as x } from '@kubernetes/client-node';"],
    ['src/cli/probe.ts', "import { x } from '../engine/evaluation/instance-evaluation.ts';"],
    ['src/cli/probe.ts', "import { UsageError as x } from '../command-line.ts';"],
    ['src/config.ts', "import { parseCommandLine as x } from './command-line.ts';"],
  ])('allows in %s: %s', async (importer, statement) => {
    expect(await rulesBrokenBy(importer, statement)).toEqual([]);
  });
});

describe('the operator folder boundary', () => {
  it.each([
    [
      reconciler,
      "import { OperatorCaches as x } from '../operator/watches/caches.ts';",
      ['operator-only-from-main', 'reconcile-sees-ports'],
    ],
    [
      'src/framework/watches/informer.ts',
      "import { x } from '../../operator/watches/event-routing.ts';",
      ['framework-knows-nothing-built-on-it', 'operator-only-from-main'],
    ],
    [
      'src/kube/cluster.ts',
      "import { x } from '../operator/stencil-operator.ts';",
      ['kube-implements-ports', 'operator-only-from-main'],
    ],
    [
      'src/operator/watches/caches.ts',
      "import { loadConfig as x } from '../../config.ts';",
      ['config-only-from-entry-points', 'operator-takes-options-not-config'],
    ],
    [
      'src/operator/watches/caches.ts',
      "import { runOperator as x } from '../../main.ts';",
      ['main-only-from-command-table', 'operator-takes-options-not-config'],
    ],
    [
      'src/operator/watches/caches.ts',
      "import { x } from '../../cli/render-command.ts';",
      ['operator-takes-options-not-config'],
    ],
    [
      'src/operator/watches/caches.ts',
      "import { KubeConfig as x } from '@kubernetes/client-node';",
      ['client-node-only-in-kube-and-framework'],
    ],
  ])('rejects in %s: %s', async (importer, statement, rules) => {
    expect(await rulesBrokenBy(importer, statement)).toEqual(rules);
  });

  it.each([
    ['src/main.ts', "import { StencilOperator as x } from './operator/stencil-operator.ts';"],
    [
      'src/operator/watches/caches.ts',
      "import { Informer as x } from '../../framework/watches/informer.ts';",
    ],
    ['src/operator/watches/caches.ts', "import { KubeCluster as x } from '../../kube/cluster.ts';"],
    ['src/operator/watches/caches.ts', "import type { Logger as x } from '../../log.ts';"],
  ])('allows in %s: %s', async (importer, statement) => {
    expect(await rulesBrokenBy(importer, statement)).toEqual([]);
  });
});

describe('npm run lint', () => {
  it('fails on a forbidden import in a nested engine file', () => {
    // The depcruise half of the lint script, run as it is in a tree whose only violation is a
    // file two folders below src/engine reading the file system.
    const scripts = (
      JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    const command = /(?:^|&&)\s*depcruise ([^&]+)/.exec(scripts.lint ?? '')?.[1]?.trim();
    expect(command).toBe(`src --config ${CONFIG} --output-type err-long`);
    const root = tree({
      [nested]: "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n",
      'src/engine/fine.ts': 'export const fine = 1;\n',
    });
    copyFileSync(join(REPO, CONFIG), join(root, CONFIG));
    const depcruise = join(REPO, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
    const run = spawnSync(process.execPath, [depcruise, ...command!.split(/\s+/)], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(run.status).not.toBe(0);
    expect(run.stdout).toContain(`engine-and-api-do-no-io: ${nested} → fs`);
    expect(run.stdout).toContain('1 dependency violations (1 errors');
  });
});
