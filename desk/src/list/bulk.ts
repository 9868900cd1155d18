import { FrappeContext, type FrappeConfig, type Filter } from 'frappe-react-sdk';
import { useCallback, useContext } from 'react';
import { messagesOf } from '../form/errors';
import type { Selection } from './useSelection';

/** The names one request of the lookup reads (the list API's largest page in Frappe's desk). */
const NAMES_PAGE = 500;
/** A selection of "all matching" acts on at most this many (the bulk methods' own limits are lower). */
const NAMES_MAX = 10_000;

/** The SDK's client, for calls made in answer to a click (the hooks' calls are made on render). */
export function useFrappeClient(): FrappeConfig {
  const client = useContext(FrappeContext);
  if (!client) throw new Error('useFrappeClient needs a FrappeProvider');
  return client;
}

/**
 * The names a selection stands for: those picked, or every record matching the filters, read in
 * pages through frappe.client.get_list (so an action on "all matching" covers more than the page).
 */
export function useSelectionNames(doctype: string, filters: Filter[]) {
  const { call } = useFrappeClient();
  return useCallback(
    async (selection: Selection): Promise<string[]> => {
      if (!selection.allMatching) return selection.names;
      const names: string[] = [];
      for (let start = 0; start < NAMES_MAX; start += NAMES_PAGE) {
        const res = await call.get<{ message: Array<{ name: unknown }> }>('frappe.client.get_list', {
          doctype,
          fields: ['name'],
          filters,
          order_by: 'creation asc',
          limit_start: start,
          limit_page_length: NAMES_PAGE,
        });
        names.push(...res.message.map((r) => (typeof r.name === 'string' ? r.name : String(r.name))));
        if (res.message.length < NAMES_PAGE) break;
      }
      return names;
    },
    [call, doctype, filters],
  );
}

/** The messages of an answer (`_server_messages`), in text; none when it carried none. */
export function serverMessages(answer: unknown): string[] {
  if (typeof answer !== 'object' || answer === null || !('_server_messages' in answer)) return [];
  return messagesOf(answer);
}
