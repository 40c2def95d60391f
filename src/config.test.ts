import { describe, expect, it } from 'vitest';
import { helpText } from './command-line.ts';
import { ConfigError, loadConfig, RUN_COMMAND } from './config.ts';

describe('stencil run configuration', () => {
  it('has the defaults of SPEC §9', () => {
    expect(loadConfig([], {})).toEqual({
      kubeconfig: undefined,
      namespaces: undefined,
      concurrency: 8,
      kubeQps: 500,
      kubeBurst: 1000,
      resyncSeconds: 600,
      logLevel: 'info',
      logFormat: 'json',
      webhookPort: 9443,
      webhookUrl: undefined,
      webhookService: undefined,
      webhookCertDir: undefined,
      webhookConfigurations: 'operator',
      webhookBreakGlassGroups: [],
      authorizeSources: 'operator',
      tenancy: { actAs: 'service-account' },
      apiGroups: new Map(),
      operatorNamespace: undefined,
      leaderElect: false,
      sharding: undefined,
      leaseDurationSeconds: 15,
      renderTimeoutSeconds: 5,
      renderWorkers: undefined,
      metricsBindAddress: ':8080',
      healthProbeBindAddress: ':8081',
    });
  });

  it("acts as each Template's ServiceAccount unless --act-as=operator, with an optional default name", () => {
    expect(loadConfig(['--default-service-account', 'stencil-templates'], {}).tenancy).toEqual({
      actAs: 'service-account',
      defaultServiceAccount: 'stencil-templates',
    });
    expect(loadConfig([], { STENCIL_ACT_AS: 'operator' }).tenancy).toEqual({ actAs: 'operator' });
    expect(() => loadConfig(['--act-as', 'root'], {})).toThrow(/--act-as/);
    expect(() => loadConfig(['--default-service-account', 'Not_A_Name'], {})).toThrow(
      /--default-service-account must be a ServiceAccount name/,
    );
  });

  it('reads --api-groups (STENCIL_API_GROUPS) as the allowance of typed APIs, and refuses a bad one', () => {
    const config = loadConfig(['--api-groups', 'platform=apps.example.com,data.example.com'], {});
    expect(config.apiGroups).toEqual(
      new Map([['platform', new Set(['apps.example.com', 'data.example.com'])]]),
    );
    expect(loadConfig([], { STENCIL_API_GROUPS: '*=x.example.com' }).apiGroups).toEqual(
      new Map([['*', new Set(['x.example.com'])]]),
    );
    expect(() => loadConfig(['--api-groups', 'platform=stencil.dev'], {})).toThrow(
      /--api-groups: group "stencil.dev" cannot be allowed/,
    );
  });

  it('reads --authorize-sources, and requester mode only with the webhook that records requesters', () => {
    const webhook = ['--webhook-url', 'https://127.0.0.1:9443/validate-strict'];
    expect(loadConfig(['--authorize-sources', 'requester', ...webhook], {}).authorizeSources).toBe(
      'requester',
    );
    expect(() => loadConfig(['--authorize-sources', 'requester'], {})).toThrow(
      /--authorize-sources=requester needs the admission webhook/,
    );
    expect(() =>
      loadConfig(['--authorize-sources', 'requester', '--webhook-port', '0', ...webhook], {}),
    ).toThrow(/needs the admission webhook/);
    expect(() => loadConfig(['--authorize-sources', 'user'], {})).toThrow(
      '--authorize-sources must be one of operator, requester, got "user"',
    );
  });

  it('reads the render deadline and workers, refusing a deadline that is not above zero', () => {
    const config = loadConfig(['--render-timeout', '2.5'], { STENCIL_RENDER_WORKERS: '3' });
    expect([config.renderTimeoutSeconds, config.renderWorkers]).toEqual([2.5, 3]);
    expect(() => loadConfig(['--render-timeout', '0'], {})).toThrow(
      '--render-timeout must be a number > 0, got "0"',
    );
    expect(() => loadConfig(['--render-workers', 'two'], {})).toThrow(
      '--render-workers must be a positive integer, got "two"',
    );
  });

  it('reads sharding: auto by member Leases, or a fixed index of a fixed count', () => {
    expect(loadConfig(['--shards', 'auto'], {}).sharding).toEqual({ mode: 'auto' });
    expect(loadConfig(['--shard-index', '2', '--shard-count', '3'], {}).sharding).toEqual({
      mode: 'static',
      index: 2,
      count: 3,
    });
    expect(loadConfig([], { STENCIL_SHARDS: 'auto' }).sharding).toEqual({ mode: 'auto' });
  });

  it.each([
    [['--shards', '3'], /--shards must be auto, got "3"/],
    [['--shards', 'auto', '--leader-elect'], /--shards auto and --leader-elect exclude/],
    [['--shards', 'auto', '--shard-count', '2'], /exclude each other/],
    [['--shard-index', '1'], /--shard-index and --shard-count go together/],
    [['--shard-index', '3', '--shard-count', '3'], /--shard-index must be an integer from 0 to 2/],
    [['--shard-index=-1', '--shard-count', '3'], /--shard-index must be an integer/],
    [['--lease-duration', '0'], /--lease-duration must be a positive integer/],
  ])('refuses %j', (argv, message) => {
    expect(() => loadConfig(argv, {})).toThrow(message);
  });

  it('reads STENCIL_<NAME> from the environment, and a flag wins over it', () => {
    const env = {
      STENCIL_CONCURRENCY: '3',
      STENCIL_NAMESPACES: 'a, b',
      STENCIL_LEADER_ELECT: 'true',
      KUBECONFIG: '/k',
    };
    expect(loadConfig([], env)).toMatchObject({
      concurrency: 3,
      namespaces: ['a', 'b'],
      leaderElect: true,
      kubeconfig: '/k',
    });
    expect(loadConfig(['--concurrency=5', '--kubeconfig', '/x'], env)).toMatchObject({
      concurrency: 5,
      kubeconfig: '/x',
    });
  });

  it('reads the client rate limit from --kube-qps/--kube-burst or STENCIL_KUBE_QPS/BURST', () => {
    expect(loadConfig([], { STENCIL_KUBE_QPS: '50.5', STENCIL_KUBE_BURST: '80' })).toMatchObject({
      kubeQps: 50.5,
      kubeBurst: 80,
    });
    expect(
      loadConfig(['--kube-qps=0', '--kube-burst=1'], { STENCIL_KUBE_QPS: '50' }),
    ).toMatchObject({ kubeQps: 0, kubeBurst: 1 });
  });

  it('parses the webhook Service reference', () => {
    expect(
      loadConfig(['--webhook-service=stencil-system/stencil-webhook'], {}).webhookService,
    ).toEqual({ namespace: 'stencil-system', name: 'stencil-webhook', port: 443 });
    expect(loadConfig(['--webhook-service=ns/svc:8443'], {}).webhookService).toEqual({
      namespace: 'ns',
      name: 'svc',
      port: 8443,
    });
  });

  it.each([
    [['--concurrency=0'], '--concurrency must be a positive integer'],
    [['--kube-qps=-1'], '--kube-qps must be a number ≥ 0, got "-1"'],
    [['--kube-qps=fast'], '--kube-qps must be a number ≥ 0, got "fast"'],
    [['--kube-burst=0'], '--kube-burst must be a positive integer'],
    [['--log-format=xml'], '--log-format must be one of json, text'],
    [
      ['--webhook-configurations=helm'],
      '--webhook-configurations must be one of operator, install',
    ],
    [['--webhook-port=70000'], '--webhook-port must be a port number'],
    [['--webhook-service=nope'], '--webhook-service must be namespace/name[:port]'],
    [['--metrics-bind-address=8080'], '--metrics-bind-address must be [host]:port or 0'],
    [['--frobnicate'], 'unknown flag --frobnicate; usage: stencil run [flags]'],
    [['--concurrency'], "Option '--concurrency <value>' argument missing; usage: stencil run"],
    [['stray'], "Unexpected argument 'stray'; usage: stencil run [flags]"],
  ])('refuses %j with a message naming the flag', (argv, message) => {
    expect(() => loadConfig(argv, {})).toThrow(ConfigError);
    expect(() => loadConfig(argv, {})).toThrow(message);
  });

  it('reads the break-glass groups from the flag or STENCIL_WEBHOOK_BREAK_GLASS_GROUPS', () => {
    expect(
      loadConfig(['--webhook-break-glass-groups', 'sre, oncall,'], {}).webhookBreakGlassGroups,
    ).toEqual(['sre', 'oncall']);
    const env = { STENCIL_WEBHOOK_BREAK_GLASS_GROUPS: 'platform-admins' };
    expect(loadConfig([], env).webhookBreakGlassGroups).toEqual(['platform-admins']);
    expect(loadConfig(['--webhook-break-glass-groups=sre'], env).webhookBreakGlassGroups).toEqual([
      'sre',
    ]);
  });

  it('accepts every flag its help lists, and its help lists every flag with a description', () => {
    const lines = helpText(RUN_COMMAND).split('\n');
    for (const [name, flag] of Object.entries(RUN_COMMAND.flags)) {
      const line = lines.find((l) => new RegExp(`^ +--${name}[ =]`).test(l));
      expect(line, `--${name} in stencil run --help`).toBeDefined();
      expect(flag.description).toMatch(/^\S.{10,}$/);
      expect(line).toContain(flag.description);
      const argv = flag.type === 'boolean' ? [`--${name}`] : [`--${name}`, 'x'];
      // Parsed (a value may still be refused by its own check, never as an unknown flag).
      expect(() => loadConfig(argv, {})).not.toThrow(/unknown flag/);
    }
  });
});
