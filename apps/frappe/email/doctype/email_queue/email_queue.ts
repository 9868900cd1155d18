import type { DocController } from '@quire/documents';

/** The flush job, deduplicated: one waiting flush sends every row queued before it runs. */
const FLUSH = 'frappe.email.queue.flush';

/**
 * Email Queue: a new row asks for a flush at once, in its own transaction (rolled back, nothing is
 * sent; committed, the flush is never lost). Rows a flush missed go with the next minute's tick.
 */
export const controller: DocController = {
  async after_insert(a) {
    if (a.flags.installing) return;
    await a.enqueue(FLUSH, { queue: 'short', jobId: FLUSH });
  },
};
