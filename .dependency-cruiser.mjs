// The import boundaries of docs/architecture.md, checked by `npm run lint` (depcruise src) and
// by test/unit/lint-boundaries.test.ts. Paths are relative to the repository root and matched
// as regular expressions, so `^src/engine/` covers every file at any depth below src/engine.
// Type-only imports count (tsPreCompilationDeps), and so do dynamic imports.

/** Node's modules that reach outside the process, its clock or its environment. */
const NODE_IO =
  '^(node:)?(child_process|cluster|dgram|dns|fs|http|http2|https|inspector|net|os|perf_hooks|process|readline|repl|timers|tls|tty|v8|worker_threads)(/|$)';
// npm packages, wherever they were resolved from (a fixture may reach node_modules by a symlink).
const CLIENT_NODE = '(^|/)node_modules/@kubernetes/client-node/';
const DOT_I = '(^|/)node_modules/@dot-i/k8s-operator/';
const LOGGING_AND_METRICS = '(^|/)node_modules/(pino|prom-client)/';
/**
 * The engine's folders, one per concern, from the leaf up (docs/architecture.md): each imports only
 * the folders before it here. shared/ is the leaf, with its own rule below.
 */
const ENGINE_CONCERNS = [
  'shared',
  'crd-schema',
  'object-schema',
  'redaction',
  'objects',
  'sources',
  'parameters',
  'health',
  'render',
  'sync',
  'releases',
  'typed-api',
  'evaluation',
  'instance-sets',
  'pass',
];
/** The framework's contracts that reconcilers and the webhook may use: not its machinery. */
const FRAMEWORK_CONTRACTS = '^src/framework/(reconciler|dependency-key|failure-streak)\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Modules of src/ form no import cycle (type-only imports included).',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves: an import the checker cannot follow is one it cannot check.',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
    {
      name: 'engine-is-pure',
      comment: 'src/engine is pure domain logic: it imports only api/ and itself.',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: '^src/', pathNot: '^src/(engine|api)/' },
    },
    {
      name: 'engine-shared-is-a-leaf',
      comment:
        'src/engine/shared holds what every concern of the engine shares (JSON, JSONPath, ' +
        'problems, conditions, selectors): it imports only itself and api/.',
      severity: 'error',
      from: { path: '^src/engine/shared/' },
      to: { path: '^src/', pathNot: '^src/(api|engine/shared)/' },
    },
    ...ENGINE_CONCERNS.slice(1).map((concern, at) => ({
      name: 'engine-concerns-point-down',
      comment:
        `src/engine/${concern} builds on the engine folders listed before it in ` +
        'ENGINE_CONCERNS, never on one after it: the engine reads from the leaf up.',
      severity: 'error',
      from: { path: `^src/engine/${concern}/` },
      to: {
        path: '^src/engine/',
        pathNot: `^src/engine/(${ENGINE_CONCERNS.slice(0, at + 2).join('|')})/`,
      },
    })),
    {
      name: 'api-is-the-contract',
      comment: 'src/api is the CRD contract in TypeScript: it imports nothing but itself.',
      severity: 'error',
      from: { path: '^src/api/' },
      to: { path: '^src/', pathNot: '^src/api/' },
    },
    {
      name: 'engine-and-api-do-no-io',
      comment:
        'src/engine and src/api are pure: no node module with I/O, a clock or the environment.',
      severity: 'error',
      from: { path: '^src/(engine|api)/' },
      to: { dependencyTypes: ['core'], path: NODE_IO },
    },
    {
      name: 'engine-and-api-use-no-process-services',
      comment: 'src/engine and src/api log nothing and count nothing: they return what happened.',
      severity: 'error',
      from: { path: '^src/(engine|api)/' },
      to: { path: LOGGING_AND_METRICS },
    },
    {
      name: 'client-node-only-in-kube-and-framework',
      comment:
        'Only src/kube/ and src/framework/ talk to the API server (@kubernetes/client-node).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(kube|framework)/' },
      to: { path: CLIENT_NODE },
    },
    {
      name: 'dot-i-only-in-framework',
      comment: 'Only src/framework/ may use @dot-i/k8s-operator.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/framework/' },
      to: { path: DOT_I },
    },
    {
      name: 'framework-knows-nothing-built-on-it',
      comment:
        'src/framework is controller-runtime in miniature: it imports only itself and the ' +
        'Kubernetes object shapes of api/object-meta.ts, nothing of Stencil.',
      severity: 'error',
      from: { path: '^src/framework/' },
      to: { path: '^src/', pathNot: '^src/(framework/|api/object-meta\\.ts$)' },
    },
    {
      name: 'reconcile-sees-ports',
      comment:
        'Reconcilers see ports and framework contracts (reconciler.ts, dependency-key.ts), ' +
        'never kube/, the framework machinery, the operator, the webhook or the process.',
      severity: 'error',
      from: { path: '^src/reconcile/' },
      to: { path: '^src/', pathNot: ['^src/(api|engine|reconcile)/', FRAMEWORK_CONTRACTS] },
    },
    {
      name: 'webhook-sees-ports',
      comment:
        'The webhook sees ports, reconcile/ and framework contracts (reconciler.ts, ' +
        'dependency-key.ts, failure-streak.ts), never kube/, the framework machinery, the operator or the process.',
      severity: 'error',
      from: { path: '^src/webhook/' },
      to: {
        path: '^src/',
        pathNot: ['^src/(api|engine|reconcile|webhook)/', FRAMEWORK_CONTRACTS],
      },
    },
    {
      name: 'kube-implements-ports',
      comment:
        'src/kube implements the cluster port and the framework interfaces: of reconcile/ it ' +
        'sees only cluster-port.ts, and nothing of the operator, the webhook or the process.',
      severity: 'error',
      from: { path: '^src/kube/' },
      to: {
        path: '^src/',
        pathNot: ['^src/(api|engine|framework|kube)/', '^src/reconcile/cluster-port\\.ts$'],
      },
    },
    {
      name: 'operator-only-from-main',
      comment: 'Only main.ts (and tests, bench, tools) use src/operator/.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/operator/', '^src/main\\.ts$'] },
      to: { path: '^src/operator/' },
    },
    {
      name: 'operator-takes-options-not-config',
      comment: 'src/operator is composed by main.ts: it takes options, never flags or config.',
      severity: 'error',
      from: { path: '^src/operator/' },
      to: { path: '^src/(cli/|(cli|command-line|config|main|http-servers)\\.ts$)' },
    },
    {
      name: 'offline-cli-commands',
      comment:
        'src/cli holds the offline commands: no operator, reconciler, kube, framework or webhook.',
      severity: 'error',
      from: { path: '^src/cli/' },
      to: { path: '^src/(operator|reconcile|kube|framework|webhook)/' },
    },
    {
      name: 'cli-entry-is-not-imported',
      comment: 'src/cli.ts is the `stencil` binary: nothing imports it.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/cli\\.ts$' },
    },
    {
      name: 'main-only-from-command-table',
      comment: 'src/main.ts composes `stencil run`: only the command table imports it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/commands\\.ts$' },
      to: { path: '^src/main\\.ts$' },
    },
    {
      name: 'config-only-from-entry-points',
      comment:
        'src/config.ts is the only reader of flags and STENCIL_*: only the command table ' +
        '(cli/commands.ts) and main.ts see it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(cli/commands|main)\\.ts$' },
      to: { path: '^src/config\\.ts$' },
    },
    {
      name: 'config-below-the-commands',
      comment:
        'src/config.ts is read by the commands: it imports none of them (cli/, cli.ts, main.ts).',
      severity: 'error',
      from: { path: '^src/config\\.ts$' },
      to: { path: '^src/(cli/|operator/|(cli|main|http-servers)\\.ts$)' },
    },
    {
      name: 'command-line-is-a-leaf',
      comment: 'src/command-line.ts is shared by config.ts and cli/: it imports nothing of src/.',
      severity: 'error',
      from: { path: '^src/command-line\\.ts$' },
      to: { path: '^src/' },
    },
    {
      name: 'process-services-below-the-operator',
      comment:
        'log.ts, metrics.ts and http-servers.ts serve the whole process: of src/ they may see ' +
        'only api/ and framework/ interfaces.',
      severity: 'error',
      from: { path: '^src/(log|metrics|http-servers)\\.ts$' },
      to: { path: '^src/', pathNot: '^src/(api|framework)/' },
    },
  ],
  options: {
    // Tests exercise the layers from outside and may import across them: the boundaries are
    // those of the shipped code.
    exclude: { path: '\\.test\\.ts$' },
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
  },
};
