import { useEffect, useRef, useState } from 'react';
import { useBlocker } from 'react-router';
import { text } from '../text';
import { ConfirmDialog } from '../ui/ConfirmDialog';

/**
 * Leaving a form with changes the user made and did not save asks first: in the desk with an
 * in-page dialog (react-router's blocker, drawn by LeaveDialog), closing or reloading the tab with
 * the browser's own question (beforeunload). `markEdited(false)` after a save or a delete: a ref
 * besides the state, because those navigate in the same tick that clears it.
 */
export function useLeaveGuard() {
  const [edited, setEdited] = useState(false);
  const editedRef = useRef(false);
  const markEdited = (value: boolean) => {
    editedRef.current = value;
    setEdited(value);
  };
  const blocker = useBlocker(({ currentLocation, nextLocation }) => editedRef.current && currentLocation.pathname !== nextLocation.pathname);
  useEffect(() => {
    if (!edited) return;
    const ask = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener('beforeunload', ask);
    return () => window.removeEventListener('beforeunload', ask);
  }, [edited]);
  return { blocker, markEdited };
}

/** The question a blocked navigation asks: Cancel stays with the edits, Leave drops them. */
export function LeaveDialog({ blocker }: { blocker: ReturnType<typeof useBlocker> }) {
  if (blocker.state !== 'blocked') return null;
  return (
    <ConfirmDialog
      title={text.formPage.leaveTitle}
      confirmLabel={text.formPage.leave}
      cancelLabel={text.formPage.stay}
      destructive
      onConfirm={() => blocker.proceed()}
      onCancel={() => blocker.reset()}
    >
      <p>{text.formPage.leaveQuestion}</p>
    </ConfirmDialog>
  );
}

/**
 * Ctrl+S / Cmd+S: the form's save, never the browser's "save page". The form sets `.current` on
 * every render (after its early returns, where its save is known).
 */
export function useSaveShortcut(): { current: () => void } {
  const action = useRef<() => void>(() => undefined);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 's') {
        e.preventDefault();
        action.current();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  return action;
}
