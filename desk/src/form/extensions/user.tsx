import { useFrappePostCall } from 'frappe-react-sdk';
import { useState } from 'react';
import { SecretDialog } from '../../shell/SecretDialog';
import { text } from '../../text';
import type { FormContext, FormExtension } from './types';

/**
 * User -> API Access (Frappe's "Generate Keys" button): a new API secret for the user, shown once
 * with the key and the ready `Authorization` header; the server keeps only its hash.
 */
function GenerateKeys({ meta, name, dirty, reload, fail }: FormContext) {
  const { call, loading } = useFrappePostCall<{ message: { api_secret: string } }>('frappe.core.doctype.user.user.generate_keys');
  const [keys, setKeys] = useState<{ key: string; secret: string } | null>(null);
  if (!meta.__perm.rights.write) return null;
  const generate = async () => {
    try {
      const answer = await call({ user: name });
      // The key is kept when the user had one: it is read from the document as saved now.
      const fresh = await reload();
      setKeys({ key: typeof fresh?.api_key === 'string' ? fresh.api_key : '', secret: answer.message.api_secret });
    } catch (e) {
      fail(e);
    }
  };
  return (
    <>
      <button type="button" className="button" disabled={loading || dirty} onClick={() => void generate()}>
        {text.user.generateKeys}
      </button>
      {keys && (
        <SecretDialog
          title={text.user.keysTitle}
          intro={text.user.keysIntro}
          rows={[
            { label: text.user.apiKey, value: keys.key },
            { label: text.user.apiSecret, value: keys.secret },
            { label: text.user.header, value: `Authorization: token ${keys.key}:${keys.secret}` },
          ]}
          onClose={() => setKeys(null)}
        />
      )}
    </>
  );
}

export const user: FormExtension = { Actions: GenerateKeys };
