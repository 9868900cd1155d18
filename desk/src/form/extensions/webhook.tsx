import { useFrappePostCall } from 'frappe-react-sdk';
import { Link } from 'react-router';
import { listPath } from '../../meta/slug';
import { text } from '../../text';
import type { FormContext, FormExtension } from './types';

/** Webhook: a way to its Webhook Request Log (the list, filtered to this webhook). */
function RequestLogLink({ name }: FormContext) {
  const filters = JSON.stringify([['webhook', '=', name]]);
  return (
    <Link className="button" to={`${listPath('Webhook Request Log')}?${new URLSearchParams({ filters }).toString()}`}>
      {text.webhook.requestLog}
    </Link>
  );
}

/** Webhook Request Log: the event sent again (replay_event: same event id, due at once). */
function Replay({ doc, notify, fail }: FormContext) {
  const { call, loading } = useFrappePostCall<{ message: boolean }>('frappe.integrations.doctype.webhook.webhook.replay_event');
  const event = typeof doc.event_id === 'string' ? doc.event_id : '';
  if (!event) return null;
  const replay = async () => {
    try {
      const answer = await call({ event });
      notify(answer.message ? text.webhook.replayed : text.webhook.replayGone);
    } catch (e) {
      fail(e);
    }
  };
  return (
    <button type="button" className="button" disabled={loading} onClick={() => void replay()}>
      {text.webhook.replay}
    </button>
  );
}

export const webhook: FormExtension = { Actions: RequestLogLink };
export const webhookRequestLog: FormExtension = { Actions: Replay };
