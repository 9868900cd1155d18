import path from 'node:path';
import type { Queryable } from '@quire/db';
import { expect } from 'vitest';
import { ROOT } from '../support/process';
import type { TestTenant } from '../support/server';
import { until } from '../support/until';

/** The jobs test app: methods that enqueue (job_lab.api), the functions jobs run (job_lab.tasks), Job Note. */
export const JOB_LAB = path.join(ROOT, 'tests/fixtures/apps/job_lab');

/** Calls job_lab.api.enqueue; answers what ctx.enqueue answered. */
export async function enqueue(t: TestTenant, args: Record<string, unknown>): Promise<{ id: string; created: boolean }> {
  const res = await t.call('POST', '/api/method/job_lab.api.enqueue', { json: args });
  expect(res.status, res.text).toBe(200);
  return res.body.message as { id: string; created: boolean };
}

/** The titles of the tenant's Job Notes, sorted. */
export async function noteTitles(t: TestTenant): Promise<string[]> {
  const res = await t.call('GET', '/api/resource/Job Note', { query: { fields: '["title"]', limit_page_length: 0 } });
  expect(res.status, res.text).toBe(200);
  return (res.body.data as Array<{ title: string }>).map((r) => r.title).sort();
}

/** Waits until the tenant has a note titled `title`; fails the test after `ms`. */
export async function waitForNote(t: TestTenant, title: string, ms = 15_000): Promise<void> {
  const titles = await until(
    () => noteTitles(t),
    (list) => list.includes(title),
    ms,
  );
  expect(titles).toContain(title);
}

export interface JobRow {
  id: string;
  status: string;
  attempts: number;
  error: string | null;
  queue: string;
  started_at: string | null;
}

export async function jobRow(db: Queryable, id: string): Promise<JobRow | undefined> {
  const { rows } = await db.query<JobRow>(`SELECT "id", "status", "attempts", "error", "queue", "started_at" FROM quire.jobs WHERE "id" = $1`, [id]);
  return rows[0];
}

export async function waitForStatus(db: Queryable, id: string, status: string, ms = 15_000): Promise<JobRow | undefined> {
  return until(
    () => jobRow(db, id),
    (r) => r?.status === status,
    ms,
  );
}
