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
// session cookie. No socket: the desk does not listen to realtime events yet (Quire serves them at /socket.io).
createRoot(root).render(
  <StrictMode>
    <FrappeProvider enableSocket={false} swrConfig={{ revalidateOnFocus: false, revalidateOnReconnect: false }}>
      <RouterProvider router={router} />
    </FrappeProvider>
  </StrictMode>,
);
