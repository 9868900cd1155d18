import { FrappeProvider } from 'frappe-react-sdk';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter, RouterProvider } from 'react-router';
import { App } from './App';
import './styles.css';

// A data router (its routes are App's own <Routes>): a form's useBlocker asks before leaving unsaved changes.
const router = createBrowserRouter([{ path: '*', element: <App /> }]);

const root = document.getElementById('root');
if (!root) throw new Error('#root is missing from index.html');

// Same origin as the API (the desk is served on the tenant's own host): no url, no token, the
// session cookie. Realtime (Quire's /socket.io on the same port) in the site's namespace, which the
// server writes into the page; only once signed in (a Guest's handshake is refused).
const site = document.querySelector<HTMLMetaElement>('meta[name="frappe-site-name"]')?.content;
const signedIn = document.cookie.split(';').some((c) => /^\s*user_id=(?!Guest\b)./.test(c));
const socketPort = window.location.port || undefined;

createRoot(root).render(
  <StrictMode>
    <FrappeProvider
      enableSocket={Boolean(site) && signedIn}
      siteName={site}
      socketPort={socketPort}
      swrConfig={{ revalidateOnFocus: false, revalidateOnReconnect: false }}
    >
      <RouterProvider router={router} />
    </FrappeProvider>
  </StrictMode>,
);
