import { insertDoc, setValues, type DocContext } from '@quire/documents';
import { nowDatetime } from '@quire/meta';

/**
 * After a scheduled job ran: its Scheduled Job Type's `last_execution`, and a Scheduled Job Log
 * entry when it failed or its type asks for one (`create_log`), as Frappe keeps them. Best effort:
 * a type deleted meanwhile is no reason to fail the run.
 */
export async function recordScheduledRun(ctx: DocContext, jobType: string, error: string | undefined): Promise<void> {
  const meta = ctx.meta.get('Scheduled Job Type');
  if (!meta) return;
  await ctx.db.transaction(async (tx) => {
    const { rows } = await tx.query<{ create_log: number | null }>(`SELECT "create_log" FROM ${meta.table} WHERE "name" = $1`, [jobType]);
    if (!rows[0]) return;
    await setValues(tx, meta, jobType, { last_execution: nowDatetime() });
    if (error !== undefined || rows[0].create_log === 1) {
      await insertDoc(
        { ...ctx, db: tx },
        'Scheduled Job Log',
        { scheduled_job_type: jobType, status: error === undefined ? 'Complete' : 'Failed', ...(error === undefined ? {} : { details: error }) },
        { ignorePermissions: true },
      );
    }
  });
}
