// The operator's admission webhook end to end: keeps its certificate in a Secret (created, shared
// by every replica, renewed before expiry), keeps the webhook configurations (or, when the install
// owns them, only their caBundle) current, and answers strict mode's requests (by looking up the owning instance through the
// cluster) and, under --authorize-sources=requester, records who creates instances (ADR 0020).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeObject } from '../api/object-meta.ts';
import { FailureStreak } from '../framework/failure-streak.ts';
import { templateRefOf } from '../engine/shared/template-ref.ts';
import type { ClusterPort } from '../reconcile/cluster-port.ts';
import { getInstance, type CacheReader } from '../reconcile/reader.ts';
import { templateFor } from '../reconcile/template-content.ts';
import {
  decide,
  exemptionOf,
  ownerOf,
  type AdmissionRequest,
  type Decision,
  type Exemptions,
  type Owner,
} from './admission.ts';
import { renewBundle, type CertificateBundle } from './certificates.ts';
import { decideRequester } from './requester-admission.ts';
import { WebhookServer } from './server.ts';
import {
  caBundleApply,
  endpointHosts,
  REQUESTER_CONFIGURATION_NAME,
  REQUESTER_PATH,
  REQUESTER_WEBHOOK_NAME,
  requesterWebhookConfiguration,
  STRICT_WEBHOOK_NAME,
  WEBHOOK_CONFIGURATION_NAME,
  WEBHOOK_PATH,
  webhookConfiguration,
  type WebhookEndpoint,
} from './webhook-configuration.ts';

export interface StrictWebhookOptions {
  cluster: ClusterPort;
  endpoint: WebhookEndpoint;
  port: number;
  host?: string;
  /** Namespace of the Secret that holds the certificates. */
  namespace: string;
  secretName?: string;
  configurationName?: string;
  /**
   * Serve tls.crt/tls.key from this directory (e.g. mounted from cert-manager) instead of the
   * operator's own PKI; the ValidatingWebhookConfiguration is then left to whoever injects its
   * caBundle (cert-manager's CA injector).
   */
  certDir?: string;
  /**
   * Members of these groups may change strict-mode resources anyway (break glass); each such
   * change is logged. Default none: only the operator's own username is exempt.
   */
  breakGlassGroups?: readonly string[];
  /**
   * Record who creates TemplateInstances and Sets (--authorize-sources=requester, ADR 0020): the
   * MutatingWebhookConfiguration is kept in place; without it, one left from before is removed.
   */
  requester?: boolean;
  requesterConfigurationName?: string;
  /** The groups of published kinds (--api-groups, ADR 0032), whose creators are recorded too. */
  typedGroups?: readonly string[];
  /**
   * Who owns the webhook configurations (ADR 0023). `install` (the chart, config/deploy): they
   * come and go with the install, and the operator only keeps their caBundle current through
   * `caBundleWriter`, never creating or deleting one. `operator` (default; the playground, tests,
   * `stencil run` outside a cluster): the operator creates and keeps them whole.
   */
  configurations?: 'operator' | 'install';
  /** The cluster under CA_BUNDLE_FIELD_MANAGER, for the caBundle-only apply (`install`). */
  caBundleWriter?: Pick<ClusterPort, 'apply'>;
  /**
   * The operator's caches: the owner's Template content is chosen exactly as its reconciler
   * chooses it (the revision a progressive rollout has it on, not the live spec).
   */
  cache?: CacheReader;
  /** The namespaces the operator watches (undefined = all): the requester webhook's scope. */
  namespaces?: readonly string[];
  /** Whether this replica may write the Secret and the configuration (the leader). */
  mayWrite?: () => boolean;
  log: (
    level: 'info' | 'warn' | 'error',
    message: string,
    fields?: Record<string, unknown>,
  ) => void;
  now?: () => Date;
}

const KEYS = {
  caCert: 'ca.crt',
  caKey: 'ca.key',
  caBundle: 'ca-bundle.crt',
  cert: 'tls.crt',
  key: 'tls.key',
} as const;

/** A serving certificate managed by someone else, read (again) from its mounted files. */
async function mountedCertificate(dir: string): Promise<CertificateBundle> {
  const [cert, key] = await Promise.all([
    readFile(join(dir, 'tls.crt'), 'utf8'),
    readFile(join(dir, 'tls.key'), 'utf8'),
  ]);
  return { cert, key, caCert: '', caKey: '', caBundle: '' };
}

/** A URL endpoint on port 0 (tests, local runs) means the port the server actually got. */
function withPort(endpoint: WebhookEndpoint, port: number): WebhookEndpoint {
  if (!('url' in endpoint)) return endpoint;
  const url = new URL(endpoint.url);
  if (url.port !== '0') return endpoint;
  url.port = String(port);
  return { url: url.toString() };
}

function decode(secret: KubeObject | undefined): CertificateBundle | undefined {
  const data = (secret as { data?: Record<string, string> } | undefined)?.data;
  if (!data) return undefined;
  const read = (k: string): string | undefined =>
    data[k] ? Buffer.from(data[k], 'base64').toString('utf8') : undefined;
  const bundle = Object.fromEntries(Object.entries(KEYS).map(([field, key]) => [field, read(key)]));
  return Object.values(bundle).every(Boolean)
    ? (bundle as unknown as CertificateBundle)
    : undefined;
}

/**
 * How often the certificate and configuration are looked after: one GET, and a write only when
 * something is due. A failed refresh waits for the next: a minute is above the list/watch
 * backoff's cap, so an outage meets no more than this from it.
 */
const REFRESH_MS = 60_000;

export class StrictWebhook {
  private readonly server: WebhookServer;
  private operatorUsername = '';
  private bundle: CertificateBundle | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Failed refreshes, said once when they start and once when they end. */
  private readonly upkeep: FailureStreak;
  private endpoint: WebhookEndpoint;
  private requesterRemoved = false;
  port = 0;

  constructor(private readonly options: StrictWebhookOptions) {
    this.endpoint = options.endpoint;
    this.upkeep = new FailureStreak('webhook certificate upkeep', options.log);
    this.server = new WebhookServer({
      port: options.port,
      host: options.host,
      log: options.log,
      routes: {
        [WEBHOOK_PATH]: {
          decide: (r) => this.decide(r),
          failureMessage: 'stencil could not verify the owning TemplateInstance; retry shortly',
        },
        // Served in either mode: a configuration left from requester mode must not block creates
        // until the next refresh removes it.
        [REQUESTER_PATH]: {
          decide: (r) => Promise.resolve(decideRequester(r, this.operatorUsername)),
          failureMessage: 'stencil could not record who makes this request; retry shortly',
        },
      },
    });
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** `operatorUsername`: exactly who the operator authenticates as (SelfSubjectReview). */
  async start(operatorUsername: string): Promise<void> {
    // An empty name would exempt nobody, so strict mode would then block the operator's own
    // reverts; refuse to serve rather than half work.
    if (operatorUsername === '')
      throw new Error('strict-mode webhook: the API server did not say who the operator is');
    this.operatorUsername = operatorUsername;
    this.bundle = await this.ensureCertificate();
    this.port = await this.server.start(this.bundle);
    this.endpoint = withPort(this.options.endpoint, this.port);
    await this.ensureConfiguration();
    // Every minute: cheap (one GET), and a replica that started before the leader stored the
    // certificate picks it up quickly.
    this.timer = setInterval(() => void this.refresh(), REFRESH_MS);
    this.timer.unref();
    this.options.log('info', 'admission webhook serving', {
      port: this.port,
      requester: this.options.requester ?? false,
    });
  }

  /** Renews the certificate when due, reloads it, and re-asserts the configuration. */
  async refresh(): Promise<void> {
    try {
      const next = await this.ensureCertificate();
      if (next.cert !== this.bundle?.cert) this.server.updateCertificate(next);
      this.bundle = next;
      await this.ensureConfiguration();
      this.upkeep.succeeded();
    } catch (error) {
      this.upkeep.failed(error, { retryInMs: REFRESH_MS });
    }
  }

  private secretId(): { apiVersion: string; kind: string; name: string; namespace: string } {
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      name: this.options.secretName ?? 'stencil-webhook-tls',
      namespace: this.options.namespace,
    };
  }

  private async ensureCertificate(): Promise<CertificateBundle> {
    if (this.options.certDir) return mountedCertificate(this.options.certDir);
    const { cluster } = this.options;
    const stored = decode(await cluster.get(this.secretId()));
    const { bundle, changed } = renewBundle(
      stored,
      endpointHosts(this.options.endpoint),
      this.now(),
    );
    if (!changed || !(this.options.mayWrite?.() ?? true)) return stored ?? bundle;
    const data = Object.fromEntries(
      Object.entries(KEYS).map(([field, key]) => [
        key,
        Buffer.from(bundle[field as keyof CertificateBundle]).toString('base64'),
      ]),
    );
    const { name, namespace } = this.secretId();
    await cluster.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace },
      type: 'Opaque',
      data,
    });
    this.options.log('info', 'webhook certificate issued', { secret: `${namespace}/${name}` });
    return bundle;
  }

  private async ensureConfiguration(): Promise<void> {
    if (this.options.certDir) return;
    if (!this.bundle || !(this.options.mayWrite?.() ?? true)) return;
    if (this.options.configurations === 'install')
      return this.ensureCaBundles(this.bundle.caBundle);
    const { cluster, configurationName, requesterConfigurationName, namespaces } = this.options;
    await cluster.apply(
      webhookConfiguration(this.endpoint, this.bundle.caBundle, configurationName),
    );
    const requesterName = requesterConfigurationName ?? REQUESTER_CONFIGURATION_NAME;
    if (this.options.requester) {
      await cluster.apply(
        requesterWebhookConfiguration(
          this.endpoint,
          this.bundle.caBundle,
          requesterName,
          namespaces,
          this.options.typedGroups,
        ),
      );
    } else if (!this.requesterRemoved) {
      // Switched back to the operator's rights: a leftover configuration would keep calling us.
      // Best effort (an install without the right keeps working); the next refresh tries again.
      try {
        await cluster.delete({
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'MutatingWebhookConfiguration',
          name: requesterName,
        });
        this.requesterRemoved = true;
      } catch (error) {
        this.options.log('warn', 'could not remove the requester webhook configuration', {
          name: requesterName,
          error: String(error),
        });
      }
    }
  }

  /**
   * The install owns the configurations: set only their caBundle. One that is missing stays
   * missing (it was uninstalled, or the install has not created it yet); say so, once a refresh.
   */
  private async ensureCaBundles(caBundle: string): Promise<void> {
    const { caBundleWriter, configurationName, requesterConfigurationName } = this.options;
    if (!caBundleWriter)
      throw new Error('webhook configurations owned by the install need a caBundle writer');
    const targets = [
      caBundleApply(
        'ValidatingWebhookConfiguration',
        configurationName ?? WEBHOOK_CONFIGURATION_NAME,
        STRICT_WEBHOOK_NAME,
        caBundle,
      ),
      ...(this.options.requester
        ? [
            caBundleApply(
              'MutatingWebhookConfiguration',
              requesterConfigurationName ?? REQUESTER_CONFIGURATION_NAME,
              REQUESTER_WEBHOOK_NAME,
              caBundle,
            ),
          ]
        : []),
    ];
    for (const target of targets) {
      try {
        await caBundleWriter.apply(target);
      } catch (error) {
        this.options.log(
          'warn',
          'could not set the caBundle of a webhook configuration the install owns',
          {
            kind: target.kind,
            name: target.metadata.name,
            error: String(error),
          },
        );
      }
    }
  }

  private async decide(request: AdmissionRequest): Promise<Decision> {
    const exemptions: Exemptions = {
      operatorUsername: this.operatorUsername,
      breakGlassGroups: this.options.breakGlassGroups ?? [],
    };
    const exemption = exemptionOf(request.userInfo, exemptions);
    if (exemption?.by === 'break-glass') {
      // An audit trail for the people who bypassed strict mode; the operator reverts the change
      // at its next reconcile unless the instance or Template is changed to match.
      this.options.log('warn', 'strict mode bypassed by a break-glass group', {
        user: request.userInfo.username,
        group: exemption.group,
        operation: request.operation,
        kind: request.kind?.kind,
        namespace: request.namespace,
        name: request.name,
      });
    }
    if (exemption) return { allowed: true };
    const ref = ownerOf(request.oldObject ?? request.object);
    return decide(request, exemptions, ref ? await this.owner(ref) : undefined);
  }

  private async owner(ref: { namespace: string; name: string }): Promise<Owner> {
    const { cluster, cache } = this.options;
    const instance = await getInstance(cluster, cache, ref.namespace, ref.name);
    if (!instance) return { ...ref, state: undefined };
    // The same Template content the reconciler renders from, so both ignore the same fields.
    const { template } = await templateFor(cluster, instance, this.options.cache);
    const templateRef = templateRefOf(instance);
    return {
      ...ref,
      state: {
        deleting: Boolean(instance.metadata.deletionTimestamp),
        ignoreFields: template?.spec.sync?.ignoreFields ?? [],
        template: template ? templateRef : undefined,
      },
    };
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.server.stop();
  }
}
