import { CronExpressionParser } from 'cron-parser';
import type { JobQueueName } from '@quire/documents';

/** Frappe's Scheduled Job Type frequencies; the `Long` forms run on the long queue. */
export const FREQUENCIES = [
  'All',
  'Hourly',
  'Hourly Long',
  'Daily',
  'Daily Long',
  'Weekly',
  'Weekly Long',
  'Monthly',
  'Monthly Long',
  'Yearly',
  'Annual',
  'Cron',
] as const;
export type Frequency = (typeof FREQUENCIES)[number];

/** hooks.ts `schedulerEvents` keys (Frappe's scheduler_events) and the frequency each stands for. */
export const EVENT_FREQUENCIES: Readonly<Record<string, Frequency>> = {
  all: 'All',
  hourly: 'Hourly',
  hourly_long: 'Hourly Long',
  daily: 'Daily',
  daily_long: 'Daily Long',
  weekly: 'Weekly',
  weekly_long: 'Weekly Long',
  monthly: 'Monthly',
  monthly_long: 'Monthly Long',
  yearly: 'Yearly',
  annual: 'Annual',
};

/** Each frequency as a cron expression (UTC). `All` is every minute: Frappe's scheduler tick, which a password reset's email must not wait long for. */
const CRON_OF: Readonly<Record<Exclude<Frequency, 'Cron'>, string>> = {
  All: '* * * * *',
  Hourly: '0 * * * *',
  'Hourly Long': '0 * * * *',
  Daily: '0 0 * * *',
  'Daily Long': '0 0 * * *',
  Weekly: '0 0 * * 0',
  'Weekly Long': '0 0 * * 0',
  Monthly: '0 0 1 * *',
  'Monthly Long': '0 0 1 * *',
  Yearly: '0 0 1 1 *',
  Annual: '0 0 1 1 *',
};

export function isFrequency(value: unknown): value is Frequency {
  return typeof value === 'string' && (FREQUENCIES as readonly string[]).includes(value);
}

export function queueOfFrequency(frequency: Frequency): JobQueueName {
  return frequency.endsWith('Long') ? 'long' : 'default';
}

/** The cron expression a scheduled job runs on; throws a readable Error for a bad `Cron` format. */
export function cronOf(frequency: Frequency, cronFormat: string | null | undefined): string {
  if (frequency !== 'Cron') return CRON_OF[frequency];
  const format = (cronFormat ?? '').trim();
  if (!format) throw new Error('A Cron frequency needs a cron format');
  CronExpressionParser.parse(format, { tz: 'UTC' }); // throws on a bad one
  return format;
}

/** The first time after `from` the cron expression fires (UTC, whole minutes). */
export function nextRunAfter(cron: string, from: Date): Date {
  return CronExpressionParser.parse(cron, { currentDate: from, tz: 'UTC' }).next().toDate();
}
