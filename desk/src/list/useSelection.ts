import { useCallback, useRef, useState } from 'react';

/**
 * A list's selection: the names picked (kept across pages and refreshes), or every record that
 * matches the filters (`allMatching`, which names nothing: the action looks them up).
 */
export interface Selection {
  names: string[];
  allMatching: boolean;
}

const NONE: Selection = { names: [], allMatching: false };

export function useSelection() {
  const [selection, setSelection] = useState<Selection>(NONE);
  // The row a shift-click extends from (the last one toggled by itself).
  const anchor = useRef<string | undefined>(undefined);

  /** Toggles one row; with `range`, every row between it and the last toggled one takes its new state. */
  const toggle = useCallback((name: string, pageNames: string[], range: boolean) => {
    // Read now: the updater below runs later, after the anchor has moved to this row.
    const from = anchor.current === undefined ? -1 : pageNames.indexOf(anchor.current);
    setSelection((current) => {
      const picked = new Set(current.names);
      const on = !picked.has(name);
      const to = pageNames.indexOf(name);
      const span = range && from >= 0 && to >= 0 ? pageNames.slice(Math.min(from, to), Math.max(from, to) + 1) : [name];
      for (const n of span) {
        if (on) picked.add(n);
        else picked.delete(n);
      }
      return { names: [...picked], allMatching: false };
    });
    anchor.current = name;
  }, []);

  /** Selects (or, when all are selected, unselects) every row of the page. */
  const togglePage = useCallback((pageNames: string[]) => {
    setSelection((current) => {
      const picked = new Set(current.names);
      const all = pageNames.length > 0 && pageNames.every((n) => picked.has(n));
      for (const n of pageNames) {
        if (all) picked.delete(n);
        else picked.add(n);
      }
      return { names: [...picked], allMatching: false };
    });
  }, []);

  const selectAllMatching = useCallback(() => setSelection((current) => ({ ...current, allMatching: true })), []);
  const clear = useCallback(() => {
    anchor.current = undefined;
    setSelection(NONE);
  }, []);

  /** After a refresh: the names that were on the page before and are gone now are no longer selected. */
  const forget = useCallback((gone: string[]) => {
    if (gone.length === 0) return;
    setSelection((current) => {
      const drop = new Set(gone);
      const names = current.names.filter((n) => !drop.has(n));
      return names.length === current.names.length ? current : { ...current, names };
    });
  }, []);

  /** Exactly these names (after an action: the ones it could not act on). */
  const set = useCallback((names: string[]) => setSelection({ names, allMatching: false }), []);

  return { selection, toggle, togglePage, selectAllMatching, clear, forget, set };
}
