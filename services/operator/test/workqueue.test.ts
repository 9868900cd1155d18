import { describe, expect, it } from 'vitest';
import { WorkQueue } from '../src/kube/workqueue';

const queue = () => new WorkQueue({ backoffBaseMs: 10, backoffMaxMs: 40 });

describe('WorkQueue', () => {
  it('queues a key once however often it is added, in first-added order', async () => {
    const q = queue();
    for (const k of ['a', 'b', 'a', 'c', 'b']) q.add(k);
    expect(q.depth).toBe(3);
    expect([await q.get(), await q.get(), await q.get()]).toEqual(['a', 'b', 'c']);
  });

  it('never hands a key being processed to a second worker; added meanwhile, it comes back after done()', async () => {
    const q = queue();
    q.add('a');
    const key = await q.get();
    q.add('a');
    expect(q.depth).toBe(0); // not queued while processing
    let second: string | undefined;
    void q.get().then((k) => (second = k));
    await new Promise((r) => setTimeout(r, 5));
    expect(second).toBeUndefined();
    q.done(key!);
    await new Promise((r) => setTimeout(r, 0));
    expect(second).toBe('a');
  });

  it('backs off per key, doubling to the cap, and forgets on success', () => {
    const q = queue();
    expect([q.addRateLimited('a'), q.addRateLimited('a'), q.addRateLimited('a'), q.addRateLimited('a')]).toEqual([10, 20, 40, 40]);
    expect(q.addRateLimited('b')).toBe(10);
    q.forget('a');
    expect(q.addRateLimited('a')).toBe(10);
    q.shutDown();
  });

  it('adds a delayed key when its time comes', async () => {
    const q = queue();
    q.addAfter('a', 20);
    expect(q.depth).toBe(0);
    await new Promise((r) => setTimeout(r, 40));
    expect(q.depth).toBe(1);
  });

  it('wakes waiting workers with undefined on shutdown and takes no more keys', async () => {
    const q = queue();
    const waiting = q.get();
    q.shutDown();
    expect(await waiting).toBeUndefined();
    q.add('a');
    expect(await q.get()).toBeUndefined();
  });
});
