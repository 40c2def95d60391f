import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

describe('stencil run configuration', () => {
  it('has the defaults of SPEC §9', () => {
    expect(loadConfig([], {})).toEqual({
      kubeconfig: undefined,
      namespaces: undefined,
      concurrency: 8,
      resyncSeconds: 600,
      logLevel: 'info',
      logFormat: 'json',
      webhookPort: 9443,
      webhookUrl: undefined,
      webhookService: undefined,
      webhookCertDir: undefined,
      operatorNamespace: undefined,
      leaderElect: false,
      metricsBindAddress: ':8080',
      healthProbeBindAddress: ':8081',
    });
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
    [['--log-format=xml'], '--log-format must be one of json, text'],
    [['--webhook-port=70000'], '--webhook-port must be a port number'],
    [['--webhook-service=nope'], '--webhook-service must be namespace/name[:port]'],
    [['--metrics-bind-address=8080'], '--metrics-bind-address must be [host]:port or 0'],
    [['--frobnicate'], "Unknown option '--frobnicate'"],
  ])('refuses %j with a message naming the flag', (argv, message) => {
    expect(() => loadConfig(argv, {})).toThrow(ConfigError);
    expect(() => loadConfig(argv, {})).toThrow(message);
  });
});
