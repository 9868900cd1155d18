import { useLocation } from 'react-router';
import './flash.css';

/** What a page hands the next one to say (`navigate(to, { state: { flash } })`), e.g. "ToDo … was deleted." on the list. */
export interface FlashState {
  flash?: string;
}

function flashOf(state: unknown): string | undefined {
  const flash = typeof state === 'object' && state !== null ? (state as FlashState).flash : undefined;
  return typeof flash === 'string' && flash !== '' ? flash : undefined;
}

/**
 * A message carried to the page a navigation lands on (Frappe's show_alert after a delete), shown
 * above it in a polite live region, whatever the page; it belongs to that history entry only.
 */
export function Flash() {
  const flash = flashOf(useLocation().state);
  return (
    <div aria-live="polite" className="flash">
      {flash && <p className="notice notice-ok">{flash}</p>}
    </div>
  );
}
