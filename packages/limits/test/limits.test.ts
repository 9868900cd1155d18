import { PgliteDatabase, type Database } from '@quire/db';
import { FrappeError, RateLimitExceededError } from '@quire/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientBucket, createRateCountersTable, enforceRateLimits, PostgresRateCounter } from '../src/index';

describe('clientBucket: the address a limit counts a client by', () => {
  it('IPv4 as it is, an IPv4-mapped IPv6 address as its IPv4 form', () => {
    expect(clientBucket('203.0.113.9')).toBe('203.0.113.9');
    expect(clientBucket('::ffff:203.0.113.9')).toBe('203.0.113.9');
  });

  it('IPv6 by its /64, however the address is written', () => {
    const bucket = clientBucket('2001:db8::1');
    expect(bucket).toBe('2001:db8:0:0::/64');
    for (const same of ['2001:0db8:0000:0000:ffff:ffff:ffff:fffe', '2001:db8::abcd:1', '2001:DB8:0:0:1::1%eth0', '2001:db8::192.0.2.1']) {
      expect(clientBucket(same), same).toBe(bucket);
    }
    expect(clientBucket('2001:db8:0:1::1')).not.toBe(bucket);
    expect(clientBucket('::1')).toBe('0:0:0:0::/64');
  });

  it('anything else (a Unix socket, an empty address) is its own bucket', () => {
    expect(clientBucket('')).toBe('');
    expect(clientBucket('unknown')).toBe('unknown');
  });
});

describe('rate limits counted in the database', () => {
  let db: Database;
  beforeAll(async () => {
    db = await PgliteDatabase.open();
    await db.query('CREATE SCHEMA quire');
    await createRateCountersTable(db);
  });
  afterAll(async () => {
    await db.close();
  });

  it('counts hits per key in a window that opens at the first hit, and starts again once it ends', async () => {
    const counter = new PostgresRateCounter(db);
    const hits = [];
    for (let i = 0; i < 3; i++) hits.push(await counter.hit('k1', 3600));
    expect(hits.map((h) => h.count)).toEqual([1, 2, 3]);
    expect(hits[2]?.resetSeconds).toBeGreaterThan(3590);
    expect((await counter.hit('k2', 3600)).count).toBe(1);
    // A window that has ended (moved into the past here) counts from one again.
    await db.query(`UPDATE quire.rate_counters SET "window_ends" = now() - interval '1 second' WHERE "key" = 'k1'`);
    expect((await counter.hit('k1', 60)).count).toBe(1);
  });

  it('refuses at the first rule exceeded, with Retry-After, and does not count the later rules then', async () => {
    const counter = new PostgresRateCounter(db);
    const rules = [
      { limit: 2, seconds: 3600 },
      { limit: 1, seconds: 3600, key: 'user', ipBased: false },
    ];
    const call = (ip: string, user: string) => enforceRateLimits(counter, rules, { scope: 'acme:reset', ip, args: { user } });
    await call('198.51.100.1', 'a@example.com');
    // The same user from another address: the per-user rule refuses (case and spaces do not make another user).
    const refused = await call('198.51.100.2', ' A@example.com').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitExceededError);
    expect((refused as FrappeError).httpStatus).toBe(429);
    expect(Number((refused as FrappeError).headers?.['Retry-After'])).toBeGreaterThan(3590);
    // The first address's third call is refused by the address rule, before the user rule counts it.
    await call('198.51.100.1', 'b@example.com');
    await expect(call('198.51.100.1', 'c@example.com')).rejects.toBeInstanceOf(RateLimitExceededError);
    await expect(call('198.51.100.3', 'c@example.com')).resolves.toBeUndefined();
    // Another tenant's (or method's) counts are its own.
    await expect(enforceRateLimits(counter, rules, { scope: 'other:reset', ip: '198.51.100.1', args: { user: 'a@example.com' } })).resolves.toBeUndefined();
  });
});
