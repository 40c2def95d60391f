// What Stencil last applied, per object: the one record of "the resourceVersion our last apply
// produced", read by the applier (a render that did not change needs neither a dry run nor a
// write) and by the drift watches (the watch event of our own write is not drift).
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../api/object-meta.ts';
import { canonicalJson } from '../../engine/shared/canonical-json.ts';
import { resourceKey } from '../../engine/objects/inventory.ts';

/**
 * What was last applied, per object: rendering the same object again while the live object is
 * still at the resourceVersion our apply left it needs neither a dry run nor a write. This keeps
 * periodic resyncs of thousands of instances to one GET per object.
 */
export class AppliedMemo {
  private readonly entries = new Map<string, { hash: string; resourceVersion: string }>();

  constructor(private readonly limit = 200_000) {}

  static hash(object: KubeObject): string {
    return createHash('sha256').update(canonicalJson(object)).digest('hex');
  }

  /** Whether `resourceVersion` of the object at `key` is the one our last apply produced. */
  producedBy(key: string, resourceVersion: string | undefined): boolean {
    return (
      resourceVersion !== undefined && this.entries.get(key)?.resourceVersion === resourceVersion
    );
  }

  /** Whether our applies produced the object at all (it exists, unless deleted since). */
  has(object: KubeObject): boolean {
    return this.entries.has(resourceKey(object));
  }

  /** The hash of what our last apply of the object at its key wrote, if we applied it. */
  lastHash(object: KubeObject): string | undefined {
    return this.entries.get(resourceKey(object))?.hash;
  }

  settled(object: KubeObject, hash: string, live: KubeObject | undefined): boolean {
    const entry = this.entries.get(resourceKey(object));
    return (
      entry !== undefined &&
      entry.hash === hash &&
      entry.resourceVersion === live?.metadata.resourceVersion
    );
  }

  record(object: KubeObject, hash: string, result: KubeObject | undefined): void {
    const resourceVersion = result?.metadata.resourceVersion;
    if (!resourceVersion) return;
    if (this.entries.size >= this.limit) this.entries.clear();
    this.entries.set(resourceKey(object), { hash, resourceVersion });
  }
}
