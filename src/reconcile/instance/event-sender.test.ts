import { describe, expect, it } from 'vitest';
import { EventSender } from './event-sender.ts';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('EventSender', () => {
  it('keeps the order of one instance and does not hold back another', async () => {
    const sent: string[] = [];
    const gate = deferred();
    const events = new EventSender();
    events.enqueue('a', async () => {
      await gate.promise;
      sent.push('a1');
    });
    events.enqueue('a', async () => {
      sent.push('a2');
    });
    events.enqueue('b', async () => {
      sent.push('b1');
    });
    await Promise.resolve();
    await Promise.resolve();
    expect(sent).toEqual(['b1']);
    gate.resolve();
    await events.drain(1_000);
    expect(sent).toEqual(['b1', 'a1', 'a2']);
  });

  it('drops and counts what exceeds its bound', async () => {
    let dropped = 0;
    const gate = deferred();
    const events = new EventSender(2, () => dropped++);
    for (let i = 0; i < 5; i++) events.enqueue(`k${i}`, () => gate.promise);
    expect(dropped).toBe(3);
    gate.resolve();
    await events.drain(1_000);
    events.enqueue('again', () => Promise.resolve());
    expect(dropped).toBe(3);
  });

  it('sends at most its lanes at once, the others in their order', async () => {
    const gate = deferred();
    const started: string[] = [];
    const events = new EventSender(1_000, undefined, 2);
    for (const key of ['a', 'b', 'c', 'd'])
      events.enqueue(key, async () => {
        started.push(key);
        await gate.promise;
      });
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(started).toEqual(['a', 'b']);
    gate.resolve();
    await events.drain(1_000);
    expect(started).toEqual(['a', 'b', 'c', 'd']);
  });

  it('stops waiting at the timeout of a drain', async () => {
    const events = new EventSender();
    events.enqueue('stuck', () => new Promise<void>(() => undefined));
    await events.drain(10);
  });
});
