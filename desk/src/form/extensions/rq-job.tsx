import { useFrappePostCall } from 'frappe-react-sdk';
import { text } from '../../text';
import type { FormContext, FormExtension } from './types';

/** RQ Job: Retry for a failed or canceled job, Cancel for a queued one (the rq_job module's methods). */
function JobActions({ doc, name, reload, notify, fail }: FormContext) {
  const retry = useFrappePostCall('frappe.core.doctype.rq_job.rq_job.retry_job');
  const cancel = useFrappePostCall('frappe.core.doctype.rq_job.rq_job.cancel_job');
  const status = typeof doc.status === 'string' ? doc.status : '';
  const act = async (call: (args: { name: string }) => Promise<unknown>, done: string) => {
    try {
      await call({ name });
      await reload();
      notify(done);
    } catch (e) {
      fail(e);
    }
  };
  return (
    <>
      {status === 'failed' || status === 'canceled' ? (
        <button type="button" className="button" disabled={retry.loading} onClick={() => void act(retry.call, text.rqJob.retried)}>
          {text.rqJob.retry}
        </button>
      ) : null}
      {status === 'queued' ? (
        <button type="button" className="button" disabled={cancel.loading} onClick={() => void act(cancel.call, text.rqJob.canceled)}>
          {text.rqJob.cancel}
        </button>
      ) : null}
    </>
  );
}

export const rqJob: FormExtension = { Actions: JobActions };
