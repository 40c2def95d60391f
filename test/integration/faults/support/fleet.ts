// A fleet of TemplateInstances for fault scenarios: one Template (a ConfigMap per instance whose
// data comes from a literal and a Secret), the expected state of every instance, and the checks
// every scenario ends with: converged, nothing lost, no Secret value anywhere it must not be.
import { expect } from 'vitest';
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../../../src/api/object-meta.ts';
import type { SyncMode } from '../../../../src/api/template.ts';
import type { TemplateInstance } from '../../../../src/api/template-instance.ts';
import { API_VERSION, LABEL_INSTANCE_NAME } from '../../../../src/api/well-known.ts';
import type { KubeCluster } from '../../../../src/kube/cluster.ts';
import { eventually } from '../../support/operator.ts';
import { binarySecret, fromSecret, instance, template } from '../../support/builders.ts';
import { conditionOf } from '../../support/instances.ts';

export const TEMPLATE = 'fleet';
export const TOKEN_SECRET = 'fleet-token';

/** The body of the fleet Template: the revision is rendered so that a new one re-applies all. */
const fleetBody = (revision: number): string => `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}
data:
  color: {{parameters.color}}
  digest: {{sha256 parameters.token}}
  revision: "${revision}"
`;

export interface FleetOptions {
  count: number;
  mode: SyncMode;
  /** More YAML documents rendered per instance, after the ConfigMap. */
  extraDocuments?: string;
  allowClusterScopedResources?: boolean;
}

export class Fleet {
  /** The color each instance's ConfigMap must end with. */
  readonly expected = new Map<string, string>();
  secretValue = '';
  /** The Template's revision, rendered into every ConfigMap: a new one re-applies all of them. */
  revision = 1;

  constructor(
    readonly user: KubeCluster,
    readonly namespace: string,
    readonly options: FleetOptions,
  ) {}

  names(): string[] {
    return Array.from({ length: this.options.count }, (_, i) => `i-${String(i).padStart(3, '0')}`);
  }

  async applyTemplate(): Promise<void> {
    const extra = this.options.extraDocuments ? `---\n${this.options.extraDocuments}` : '';
    await this.user.apply(
      template(this.namespace, TEMPLATE, {
        sync: { mode: this.options.mode },
        parameters: [{ name: 'color', exposeInStatus: true }, { name: 'token' }],
        allowClusterScopedResources: this.options.allowClusterScopedResources,
        handlebars: `${fleetBody(this.revision)}${extra}`,
      }),
    );
  }

  /** Writes the Secret the instances read; a new value is a rotation. */
  async applySecret(value: string): Promise<void> {
    this.secretValue = value;
    await this.user.apply(binarySecret(this.namespace, TOKEN_SECRET, { token: value }));
  }

  async deleteSecret(): Promise<void> {
    await this.user.delete({
      apiVersion: 'v1',
      kind: 'Secret',
      name: TOKEN_SECRET,
      namespace: this.namespace,
    });
  }

  /** Creates (or changes) instances with `color`; the rest keep what they had. */
  async setColor(names: string[], color: string): Promise<void> {
    for (const name of names) {
      await this.user.apply(
        instance(this.namespace, name, TEMPLATE, [
          { name: 'color', value: color },
          { name: 'token', valueFrom: fromSecret(TOKEN_SECRET, 'token') },
        ]),
      );
      this.expected.set(name, color);
    }
  }

  /** Template, Secret and every instance, then waits until all of them converged. */
  async start(secret: string, timeoutMs = 120_000): Promise<number> {
    await this.applyTemplate();
    await this.applySecret(secret);
    const started = Date.now();
    await this.setColor(this.names(), 'blue');
    await this.awaitConverged('the fleet to converge', timeoutMs);
    return Date.now() - started;
  }

  async instances(): Promise<TemplateInstance[]> {
    return (await this.user.list(API_VERSION, 'TemplateInstance', {
      namespace: this.namespace,
    })) as unknown as TemplateInstance[];
  }

  async configMaps(): Promise<Map<string, KubeObject>> {
    const list = await this.user.list('v1', 'ConfigMap', {
      namespace: this.namespace,
      labelSelector: LABEL_INSTANCE_NAME,
    });
    return new Map(list.map((o) => [o.metadata.name ?? '', o]));
  }

  /** What is not converged yet (empty when everything is). */
  async divergence(): Promise<string[]> {
    const problems: string[] = [];
    const digest = createHash('sha256').update(this.secretValue, 'utf8').digest('hex');
    const instances = new Map((await this.instances()).map((i) => [i.metadata.name ?? '', i]));
    const maps = await this.configMaps();
    for (const [name, color] of this.expected) {
      const instance = instances.get(name);
      const ready = conditionOf(instance?.status);
      if (ready?.status !== 'True')
        problems.push(`${name}: Ready=${ready?.status} ${ready?.reason}: ${ready?.message}`);
      else if (instance?.status?.observedGeneration !== instance?.metadata.generation)
        problems.push(`${name}: status not of the current generation`);
      const data = dataOf(maps.get(name));
      if (data?.color !== color) problems.push(`${name}: color ${data?.color}, want ${color}`);
      if (data?.digest !== digest) problems.push(`${name}: digest of an old Secret value`);
      if (data?.revision !== String(this.revision))
        problems.push(`${name}: revision ${data?.revision}, want ${this.revision}`);
    }
    return problems;
  }

  /** Polls until every instance converged; returns the time it took. */
  async awaitConverged(what: string, timeoutMs = 90_000): Promise<number> {
    const started = Date.now();
    let last: string[] = [];
    await eventually(
      async () => {
        last = await this.divergence();
        return last.length === 0 || undefined;
      },
      what,
      timeoutMs,
    ).catch((error: unknown) => {
      throw new Error(
        `${String(error)}\n${last.length} not converged:\n${last.slice(0, 10).join('\n')}`,
      );
    });
    return Date.now() - started;
  }

  /**
   * Every place the Secret value (or its base64) shows where it must not: operator log lines,
   * Events in the namespace, instance statuses. The ConfigMaps carry only its digest.
   */
  async leaks(logs: string[], values: string[] = [this.secretValue]): Promise<string[]> {
    const forms = values.flatMap((v) => [v, Buffer.from(v).toString('base64')]);
    const events = await this.user.list('v1', 'Event', { namespace: this.namespace });
    const texts = [
      ...logs.map((l) => `log: ${l}`),
      ...events.map((e) => `event: ${JSON.stringify(e)}`),
      ...(await this.instances()).map((i) => `status: ${JSON.stringify(i.status)}`),
    ];
    return texts.filter((t) => forms.some((f) => t.includes(f))).map((t) => t.slice(0, 300));
  }
}

/** The `data` of a ConfigMap (undefined when there is no such ConfigMap). */
export function dataOf(object: KubeObject | undefined): Record<string, string> | undefined {
  return (object as { data?: Record<string, string> } | undefined)?.data;
}

/** One line of figures per scenario, in a form docs/reliability.md copies from. */
export function printFigures(scenario: string, figures: Record<string, number | string>): void {
  const parts = Object.entries(figures).map(([k, v]) => `${k}=${v}`);
  console.log(`[fault] ${scenario}: ${parts.join(' ')}`);
}

/** What every fault must leave: no owned object deleted, no update lost, no value leaked. */
export function expectNothingLost(outcome: {
  deletes: number;
  lostUpdates: number;
  leaks: string[];
}): void {
  expect(outcome.deletes).toBe(0);
  expect(outcome.lostUpdates).toBe(0);
  expect(outcome.leaks).toEqual([]);
}
