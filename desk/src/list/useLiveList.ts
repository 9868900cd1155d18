import { useFrappeDocTypeEventListener } from 'frappe-react-sdk';
import { useCallback, useEffect, useRef } from 'react';

/** Under a burst of changes the list asks again at most this often. */
const MIN_INTERVAL_MS = 1000;
/** A first change waits this long, so that a save's several events make one refresh. */
const SETTLE_MS = 250;

/**
 * Refreshes a DocType's list when the server says its documents changed (realtime `list_update`,
 * the SDK's doctype_subscribe). Refreshes are coalesced: one per second at most, whatever the
 * burst. The caller's refresh revalidates in place (the rows stay while the new ones come), so
 * the user's scroll, selection and filters stay.
 */
export function useLiveList(doctype: string, refresh: () => void): void {
  const latest = useRef(refresh);
  latest.current = refresh;
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const last = useRef(0);

  const onChange = useCallback(() => {
    if (timer.current !== undefined) return;
    const wait = Math.max(SETTLE_MS, last.current + MIN_INTERVAL_MS - Date.now());
    timer.current = setTimeout(() => {
      timer.current = undefined;
      last.current = Date.now();
      latest.current();
    }, wait);
  }, []);

  useEffect(
    () => () => {
      if (timer.current !== undefined) clearTimeout(timer.current);
      timer.current = undefined;
    },
    [],
  );
  useFrappeDocTypeEventListener(doctype, onChange);
}
