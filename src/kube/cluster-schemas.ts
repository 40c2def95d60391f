// The schemas the API server publishes (`/openapi/v3`), fetched when an evaluation prepares the
// checks of what it rendered (ADR 0030): the discovery document, read again at most every
// `refreshMs`, maps each group-version to its document's URL with a content hash; a document is
// fetched only when a render needs its group-version, and again only when its hash changes (a CRD
// installed or changed). When `/openapi/v3` cannot be read, rendered objects are checked against
// the offline bundle, and the log says so once.
import type { OfflineSchemas } from '../engine/object-schema/object-schema.ts';
import {
  convertPublishedDocument,
  documentPath,
  PublishedSchemas,
  type OpenApiDocument,
  type PublishedGroupVersion,
} from '../engine/object-schema/published-schemas.ts';
import { Backoff, LIST_WATCH_BACKOFF } from '../framework/backoff.ts';
import { RetryGate } from '../framework/retry-gate.ts';
import { isClusterError } from '../reconcile/cluster-port.ts';
import type { RequestSpec } from './http.ts';

/** What this needs of KubeHttp. */
export interface SchemaHttp {
  request<T>(spec: RequestSpec): Promise<T>;
}

export type SchemaLog = (
  level: 'debug' | 'info' | 'warn',
  message: string,
  fields?: Record<string, unknown>,
) => void;

export interface ClusterSchemasOptions {
  /** The discovery document is read again when older than this at a prepare (default 30 s). */
  refreshMs?: number;
  /**
   * A group-version it does not list (a CRD just installed) has it read again, at most this often
   * (default 5 s, as discovery's own cache).
   */
  missingRefreshMs?: number;
  /** After `/openapi/v3` was refused (401, 403, 404), it is asked again after this (10 min). */
  unavailableRetryMs?: number;
  now?: () => number;
  log?: SchemaLog;
}

/** `/openapi/v3`: group-version path (`apis/apps/v1`) → its document's URL, with the hash. */
interface OpenApiDiscovery {
  paths?: Record<string, { serverRelativeURL?: string }>;
}

interface Discovered {
  readAt: number;
  /** apiVersion → serverRelativeURL; undefined while `/openapi/v3` is not readable. */
  urls: Map<string, string> | undefined;
  /** It refused this operator (401, 403, 404), as opposed to failing. */
  refused?: boolean;
  /** After a failure or refusal: read again once this long has passed since `readAt`. */
  retryAfterMs?: number;
}

/** A group-version as Kubernetes writes it: `v1`, `apps/v1`, `example.com/v1beta2`. */
const API_VERSION =
  /^(?:[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?\/)?v[0-9]+(?:(?:alpha|beta)[0-9]+)?$/;

function apiVersionOf(path: string): string | undefined {
  const match = /^(?:api\/(v[^/]+)|apis\/([^/]+)\/(v[^/]+))$/.exec(path);
  if (!match) return undefined;
  return match[1] ?? `${match[2]}/${match[3]}`;
}

/** Fetches and keeps the cluster's published schemas; one per process (per API server). */
export class ClusterSchemas {
  readonly #http: SchemaHttp;
  readonly #offline: OfflineSchemas;
  readonly #refreshMs: number;
  readonly #missingRefreshMs: number;
  readonly #unavailableRetryMs: number;
  readonly #now: () => number;
  readonly #log: SchemaLog;
  #discovered: Discovered | undefined;
  #discovering: Promise<void> | undefined;
  /** Whether the unavailability was logged, so it is said once (and its end once). */
  #saidUnavailable = false;
  /** apiVersion → the document fetched, under the URL (hash) it was fetched at. */
  readonly #documents = new Map<string, { url: string; schemas: PublishedGroupVersion }>();
  readonly #fetching = new Map<string, Promise<PublishedGroupVersion | undefined>>();
  /** Between failed reads of `/openapi/v3`: `missingRefreshMs` doubling up to 30 s. */
  readonly #backoff: Backoff;
  /** A document that could not be fetched is not asked for again before its backoff. */
  readonly #documentGate: RetryGate;
  /** Documents fetched since the start (tests and benchmarks count them). */
  fetched = 0;
  /** What the evaluations check rendered objects with: these documents, else `offline`. */
  readonly schemas: PublishedSchemas;

  constructor(http: SchemaHttp, offline: OfflineSchemas, options: ClusterSchemasOptions = {}) {
    this.#http = http;
    this.#offline = offline;
    this.#refreshMs = options.refreshMs ?? 30_000;
    this.#missingRefreshMs = options.missingRefreshMs ?? 5_000;
    this.#unavailableRetryMs = options.unavailableRetryMs ?? 10 * 60_000;
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? (() => undefined);
    this.#backoff = new Backoff({
      ...LIST_WATCH_BACKOFF,
      baseMs: this.#missingRefreshMs,
      maxMs: Math.max(this.#missingRefreshMs, LIST_WATCH_BACKOFF.maxMs),
    });
    this.#documentGate = new RetryGate(LIST_WATCH_BACKOFF, this.#now);
    this.schemas = new PublishedSchemas((apiVersions) => this.documents(apiVersions), offline);
  }

  /**
   * Of `apiVersions`, those `/openapi/v3` did not list at its last reading (none before the
   * first): a CRD installed a moment ago is served before its schema is published.
   */
  unpublished(apiVersions: readonly string[]): string[] {
    const urls = this.#discovered?.urls;
    return urls ? apiVersions.filter((v) => !urls.has(v)) : [];
  }

  /** The group-versions whose documents are held, with the number of kinds of each. */
  held(): Record<string, number> {
    return Object.fromEntries(
      [...this.#documents].map(([apiVersion, d]) => [apiVersion, d.schemas.kinds.size]),
    );
  }

  /**
   * The documents of `apiVersions`, fetched unless held at the hash discovery gives, and every
   * other document held (PublishedDocuments). Never fails: what cannot be read is left out, so
   * its objects are checked offline.
   */
  async documents(
    apiVersions: readonly string[],
  ): Promise<Map<string, PublishedGroupVersion | undefined>> {
    const wanted = [...new Set(apiVersions)].filter((v) => API_VERSION.test(v));
    await this.#discover(wanted);
    const published = new Map<string, PublishedGroupVersion | undefined>();
    const urls = this.#discovered?.urls;
    if (!urls) return published;
    for (const [apiVersion, held] of this.#documents) published.set(apiVersion, held.schemas);
    await Promise.all(
      wanted.map(async (apiVersion) => {
        const url = urls.get(apiVersion);
        // Not served, or not readable now: its objects are checked offline.
        published.set(apiVersion, url ? await this.#document(apiVersion, url) : undefined);
      }),
    );
    return published;
  }

  /** Reads `/openapi/v3` when it is old, or lacks a group-version wanted and is not new. */
  async #discover(wanted: string[]): Promise<void> {
    const known = this.#discovered;
    if (known && !this.#due(known, wanted)) return;
    this.#discovering ??= this.#readDiscovery().finally(() => (this.#discovering = undefined));
    await this.#discovering;
  }

  #due(known: Discovered, wanted: string[]): boolean {
    const age = this.#now() - known.readAt;
    if (known.retryAfterMs !== undefined) return age > known.retryAfterMs;
    const { urls } = known;
    if (!urls) return age > this.#missingRefreshMs;
    return (
      age > this.#refreshMs || (age > this.#missingRefreshMs && wanted.some((v) => !urls.has(v)))
    );
  }

  async #readDiscovery(): Promise<void> {
    const readAt = this.#now();
    let discovery: OpenApiDiscovery;
    try {
      discovery = await this.#http.request<OpenApiDiscovery>({
        method: 'GET',
        path: '/openapi/v3',
      });
    } catch (error) {
      this.#unavailable(error, readAt);
      return;
    }
    const urls = new Map<string, string>();
    for (const [path, entry] of Object.entries(discovery.paths ?? {})) {
      const apiVersion = apiVersionOf(path);
      if (apiVersion && entry.serverRelativeURL) urls.set(apiVersion, entry.serverRelativeURL);
    }
    for (const apiVersion of this.#documents.keys()) {
      if (!urls.has(apiVersion)) this.#documents.delete(apiVersion);
    }
    this.#discovered = { readAt, urls };
    this.#backoff.forget('discovery');
    if (this.#saidUnavailable) {
      this.#saidUnavailable = false;
      this.#log('info', 'the API server publishes its schemas again (/openapi/v3)');
    }
  }

  /**
   * A refusal (401, 403, 404: RBAC, or a server without `/openapi/v3`) is asked again after
   * `unavailableRetryMs`, and the documents held are dropped; any other failure keeps what is
   * held and is asked again after a backoff (`missingRefreshMs` doubling up to 30 s). Either
   * way, said once.
   */
  #unavailable(error: unknown, readAt: number): void {
    const refused =
      isClusterError(error, 'Forbidden') ||
      isClusterError(error, 'Unauthorized') ||
      isClusterError(error, 'NotFound');
    const held = refused ? undefined : this.#discovered?.urls;
    if (!held) this.#documents.clear();
    this.#discovered = {
      readAt,
      urls: held,
      refused,
      retryAfterMs: refused ? this.#unavailableRetryMs : this.#backoff.next('discovery'),
    };
    if (this.#saidUnavailable) return;
    this.#saidUnavailable = true;
    const fields = {
      error: error instanceof Error ? error.message : String(error),
      offline: `the built-in schemas of Kubernetes ${this.#offline.builtIns.kubernetesVersion}`,
    };
    this.#log(
      'warn',
      held
        ? 'the API server schemas (/openapi/v3) could not be read again: those held are used'
        : 'the API server schemas (/openapi/v3) cannot be read: rendered objects are checked offline',
      fields,
    );
  }

  /** Has `/openapi/v3` read again at the next prepare that is `missingRefreshMs` away. */
  #readSoon(): void {
    const known = this.#discovered;
    if (!known || known.retryAfterMs !== undefined) return;
    const soon = this.#now() - this.#refreshMs + this.#missingRefreshMs;
    this.#discovered = { ...known, readAt: Math.min(known.readAt, soon) };
  }

  /** The document of `apiVersion` at `url`: held, being fetched, or fetched now. */
  async #document(apiVersion: string, url: string): Promise<PublishedGroupVersion | undefined> {
    const held = this.#documents.get(apiVersion);
    if (held?.url === url) return held.schemas;
    let fetching = this.#fetching.get(url);
    if (!fetching) {
      fetching = this.#fetch(apiVersion, url).finally(() => this.#fetching.delete(url));
      this.#fetching.set(url, fetching);
    }
    return (await fetching) ?? held?.schemas;
  }

  async #fetch(apiVersion: string, url: string): Promise<PublishedGroupVersion | undefined> {
    const { pathname, searchParams } = new URL(url, 'https://api-server');
    try {
      const document = await this.#documentGate.run(
        url,
        () =>
          this.#http.request<OpenApiDocument>({
            method: 'GET',
            path: pathname,
            query: Object.fromEntries(searchParams),
          }),
        () => true,
      );
      this.fetched++;
      const schemas = convertPublishedDocument(apiVersion, document);
      this.#documents.set(apiVersion, { url, schemas });
      if (schemas.notes.length > 0) {
        this.#log('info', 'published schema read with parts left out', {
          document: documentPath(apiVersion),
          notes: schemas.notes,
        });
      }
      return schemas;
    } catch (error) {
      // A hash that changed meanwhile is answered with a redirect: read discovery again soon.
      this.#readSoon();
      this.#log('debug', 'published schema not read', {
        document: documentPath(apiVersion),
        error: error instanceof Error ? error.message : String(error),
      });
      return undefined;
    }
  }
}
