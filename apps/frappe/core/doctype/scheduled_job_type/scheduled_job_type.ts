import type { DocController, HookArgs } from '@quire/documents';
import { ValidationError } from '@quire/errors';
import { cronOf, deleteSchedule, isFrequency, upsertSchedule } from '@quire/jobs';

/**
 * Scheduled Job Type: a frequency the scheduler can run (a Cron one needs a valid cron format),
 * and its row of the scheduler's index kept in step in the same transaction, so stopping or
 * starting one takes effect at the next tick. Installing and migrating rebuild the index
 * themselves (a release template must have no rows).
 */
function validate({ doc }: HookArgs): void {
  if (!isFrequency(doc.frequency)) throw new ValidationError(`Frequency cannot be ${String(doc.frequency)}`, { title: 'Invalid Frequency' });
  try {
    cronOf(doc.frequency, typeof doc.cron_format === 'string' ? doc.cron_format : null);
  } catch (e) {
    throw new ValidationError(`Invalid cron format ${JSON.stringify(doc.cron_format ?? '')}: ${(e as Error).message}`, { title: 'Invalid Cron Format' });
  }
}

async function index({ doc, tx, ctx, flags }: HookArgs): Promise<void> {
  if (flags.installing) return;
  await upsertSchedule(tx, ctx.tenant.name, doc);
}

export const controller: DocController = {
  validate,
  after_insert: index,
  on_update: index,
  async on_trash({ doc, tx, ctx }) {
    if (typeof doc.name === 'string') await deleteSchedule(tx, ctx.tenant.name, doc.name);
  },
};
