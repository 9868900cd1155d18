import { useFrappeGetCall } from 'frappe-react-sdk';
import type { ReactNode } from 'react';
import { ErrorNotice, Loading } from './states';

declare global {
  interface Window {
    /** frappe-react-sdk sends it as `X-Frappe-CSRF-Token` on every request (as Frappe's desk does). */
    csrf_token?: string;
  }
}

/**
 * Renders the signed-in desk once the session's CSRF token is known. The desk asks for it
 * (frappe.sessions.get_csrf_token, a GET: safe verbs need no token) and keeps it where the SDK
 * looks; from then on the server refuses this session's writes without it, as Frappe does.
 */
export function WithCsrfToken({ children }: { children: ReactNode }) {
  const { data, error } = useFrappeGetCall<{ message: string }>('frappe.sessions.get_csrf_token', undefined, 'csrf-token', {
    revalidateOnFocus: false,
    revalidateIfStale: false,
    shouldRetryOnError: false,
  });
  if (error) return <ErrorNotice error={error} />;
  if (!data) return <Loading />;
  window.csrf_token = data.message;
  return <>{children}</>;
}
