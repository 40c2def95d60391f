import { describe, expect, it } from 'vitest';
import { TokenBucket } from './rate-limiter.ts';

function clock(): { now: () => number; advance: (ms: number) => void } {
  let t = 0;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('TokenBucket', () => {
  it('lets a burst go at once, then spaces requests at 1/qps in arrival order', () => {
    const c = clock();
    const bucket = new TokenBucket({ qps: 10, burst: 3 }, c.now);
    expect([bucket.reserve(), bucket.reserve(), bucket.reserve()]).toEqual([0, 0, 0]);
    expect(bucket.reserve()).toBeCloseTo(100);
    expect(bucket.reserve()).toBeCloseTo(200);
  });

  it('refills at qps up to the burst after a quiet spell', () => {
    const c = clock();
    const bucket = new TokenBucket({ qps: 10, burst: 2 }, c.now);
    bucket.reserve();
    bucket.reserve();
    c.advance(10_000);
    expect([bucket.reserve(), bucket.reserve()]).toEqual([0, 0]);
    expect(bucket.reserve()).toBeCloseTo(100);
  });

  it('never delays when qps is 0 (the limit is off)', () => {
    const bucket = new TokenBucket({ qps: 0, burst: 1 }, clock().now);
    expect(Array.from({ length: 100 }, () => bucket.reserve()).every((d) => d === 0)).toBe(true);
  });
});
