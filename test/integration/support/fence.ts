// Proving that something did NOT happen, without a sleep. "Wait two seconds, then check nothing
// moved" passes whenever the operator is slower than the sleep, so it proves nothing on a busy
// machine. A fence instead changes a marker after the changes that must have no effect, waits
// until the operator has acted on the marker, and only then lets the test look.
//
// Why that is enough: each watch delivers its events in order, and the operator's routing queues
// the passes an event asks for as the event is delivered. Once the marker's changes have come
// through the watches that also carried the test's changes, those were delivered before them and
// their passes queued; the fence then waits until no pass is in flight and their Events are sent.
import type { KubeCluster } from '../../../src/kube/cluster.ts';
import type { StencilOperator } from '../../../src/operator/stencil-operator.ts';
import { fromSecret, instance, secret, template } from './builders.ts';
import { eventually } from './operator.ts';

const NAME = 'stencil-fence';

/** What the marker ConfigMap shows once the operator has acted on every part of mark `n`. */
function marked(n: number): { template: string; instance: string; secret: string } {
  return { template: `t${n}`, instance: `i${n}`, secret: `s${n}` };
}

/**
 * A marker in one namespace that the operator reacts to through the same watches as the
 * namespace's Templates, TemplateInstances and Secrets: a Template, an instance of it and a
 * Secret the instance reads, all named `stencil-fence`, rendering a ConfigMap of that name.
 * It covers changes to those kinds in that namespace, and what they cause at once.
 */
export class Fence {
  private mark = 0;

  private constructor(
    private readonly user: KubeCluster,
    private readonly namespace: string,
  ) {}

  /** Creates the marker objects and waits until the operator has rendered them. */
  static async install(user: KubeCluster, namespace: string): Promise<Fence> {
    const fence = new Fence(user, namespace);
    await fence.advance();
    return fence;
  }

  /**
   * Returns once `operator` has dealt with every change made before the call to Templates,
   * TemplateInstances and Secrets of the fence's namespace: its passes have run and their
   * Events were sent. Throws if the operator never acts on the marker.
   */
  async pass(operator: StencilOperator): Promise<void> {
    await this.advance();
    await operator.idle();
  }

  /** Changes all three marker objects and waits until the rendered ConfigMap shows them all. */
  private async advance(): Promise<void> {
    const n = ++this.mark;
    const want = marked(n);
    const { namespace, user } = this;
    await user.apply(secret(namespace, NAME, { mark: want.secret }));
    await user.apply(
      template(namespace, NAME, {
        // revert: an `off` instance would freeze after its first apply and never show a mark again.
        sync: { mode: 'revert' },
        parameters: [{ name: 'instance' }, { name: 'secret' }],
        handlebars: `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${NAME}
data:
  template: ${want.template}
  instance: {{parameters.instance}}
  secret: {{parameters.secret}}
`,
      }),
    );
    await user.apply(
      instance(namespace, NAME, NAME, [
        { name: 'instance', value: want.instance },
        { name: 'secret', valueFrom: fromSecret(NAME, 'mark') },
      ]),
    );
    await eventually(async () => {
      const rendered = (await user.get({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: NAME,
        namespace,
      })) as { data?: Record<string, string> } | undefined;
      return Object.entries(want).every(([key, value]) => rendered?.data?.[key] === value);
    }, `the operator to act on fence mark ${n} in ${namespace}`);
  }
}
