import { useFrappePostCall } from 'frappe-react-sdk';
import { useState } from 'react';
import { handOver, takeOver } from '../../shell/once';
import { SecretDialog } from '../../shell/SecretDialog';
import { text } from '../../text';
import type { DocValues } from '../../meta/types';
import type { FormContext, FormExtension } from './types';

const isSecret = (value: unknown): value is string => typeof value === 'string' && value !== '' && !/^\*+$/.test(value);
const handedKey = (name: string) => `oauth-client-secret:${name}`;

/**
 * OAuth Client: the secret exists in clear only in the answer to the create (or to
 * reset_client_secret). It is shown once, in a dialog, and then only its mask remains.
 */
function ClientSecret({ meta, name, doc, reload, fail }: FormContext) {
  // The create's answer was handed over by useAfterSave below, across the move to this URL.
  const [secret, setSecret] = useState<string | undefined>(() => takeOver(handedKey(name)));
  const { call, loading } = useFrappePostCall<{ message: { client_secret: string } }>(
    'frappe.integrations.doctype.oauth_client.oauth_client.reset_client_secret',
  );
  const confidential = doc.client_type !== 'Public';
  const reset = async () => {
    try {
      const answer = await call({ client: name });
      await reload();
      setSecret(answer.message.client_secret);
    } catch (e) {
      fail(e);
    }
  };
  return (
    <>
      {confidential && meta.__perm.rights.write && (
        <button type="button" className="button" disabled={loading} onClick={() => void reset()}>
          {text.oauthClient.resetSecret}
        </button>
      )}
      {secret && (
        <SecretDialog
          title={text.oauthClient.secretTitle}
          intro={text.oauthClient.secretIntro}
          rows={[
            { label: text.oauthClient.clientId, value: typeof doc.client_id === 'string' && doc.client_id ? doc.client_id : name },
            { label: text.oauthClient.clientSecret, value: secret },
          ]}
          onClose={() => setSecret(undefined)}
        />
      )}
    </>
  );
}

export const oauthClient: FormExtension = {
  Actions: ClientSecret,
  useAfterSave: () => (saved: DocValues, isNew: boolean) => {
    if (isNew && typeof saved.name === 'string' && isSecret(saved.client_secret)) handOver(handedKey(saved.name), saved.client_secret);
  },
};
