// One render as plain data, so it can run in a worker thread (docs/adr/0018): the body, its
// declared parameters, the context, the live producers `observed` reads and which parameters
// are Secret-backed go in; the RenderOutcome (documents, problems, tainted texts) comes out.
import type { KubeObject } from '../../api/object-meta.ts';
import { observedKey, type ObservedRef } from '../health/observed.ts';
import {
  compileTemplate,
  renderTemplate,
  type RenderContext,
  type RenderOutcome,
} from './render.ts';

export interface RenderJob {
  /** `namespace/name` of the Template, for messages. */
  template: string;
  body: string;
  parameters: string[];
  context: RenderContext;
  /** Producers `observed` reads, by observedKey of their reference; absent = not there. */
  producers: Map<string, KubeObject | undefined>;
  /** The Secret-backed parameters, whose provenance the render tracks. */
  secret: string[];
}

/** Runs a render job; the caller has compiled the body once already (compile errors are its). */
export type RenderRunner = (job: RenderJob) => Promise<RenderOutcome>;

/** The key a producer has in {@link RenderJob.producers}. */
export function producerKey(ref: ObservedRef): string {
  return observedKey({ apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name });
}

/** Compiles (cached by content) and renders: what a worker thread does with a job. */
export function runRenderJob(job: RenderJob): RenderOutcome {
  const compiled = compileTemplate(job.body, job.parameters);
  if (!compiled.ok) return { ...compiled, tainted: new Map() };
  const lookup = (ref: ObservedRef): KubeObject | undefined => job.producers.get(producerKey(ref));
  return renderTemplate(compiled.value, job.context, lookup, job.secret);
}

/** Renders on the calling thread: the CLI and tests (no deadline: a CLI has no other tenants). */
export const renderInProcess: RenderRunner = (job) => Promise.resolve(runRenderJob(job));
