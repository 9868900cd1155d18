import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FastHistogram } from '../src/request-histogram';

describe('FastHistogram', () => {
  it('is exposed exactly as prom-client’s Histogram with the same observations', async () => {
    const buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
    const ours = new Registry();
    const theirs = new Registry();
    const fast = new FastHistogram('req_seconds', 'Requests', ['method', 'route', 'status_code'], buckets, [ours]);
    const reference = new Histogram({ name: 'req_seconds', help: 'Requests', labelNames: ['method', 'route', 'status_code'], buckets, registers: [theirs] });
    const observations: Array<[string, string, number, number]> = [
      ['GET', '/api/resource/:doctype', 200, 0.004],
      ['GET', '/api/resource/:doctype', 200, 0.005],
      ['GET', '/api/resource/:doctype', 200, 0.3],
      ['POST', '/api/resource/:doctype', 417, 7],
      ['GET', 'unmatched', 404, 0.0001],
      ['GET', '/api/resource/:doctype', 200, 2.5],
    ];
    for (const [method, route, status, seconds] of observations) {
      fast.observe([method, route, status], seconds);
      reference.observe({ method, route, status_code: status }, seconds);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    fast.reset();
    reference.reset();
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });
});
