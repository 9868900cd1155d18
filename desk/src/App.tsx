import { Navigate, Route, Routes } from 'react-router';
import { FormPage } from './pages/FormPage';
import { HomePage } from './pages/HomePage';
import { ListPage } from './pages/ListPage';
import { LoginPage } from './pages/LoginPage';
import { UpdatePasswordPage } from './pages/PasswordPages';
import { WithCsrfToken } from './shell/csrf';
import { Shell } from './shell/Shell';

/**
 * Frappe's desk routes. The server already sends a Guest from /app… to /login and a signed-in
 * user from / and /login to /app, so a page here can assume who is looking at it.
 */
export function App() {
  return (
    <Routes>
      <Route path="/login" element={<LoginPage />} />
      <Route path="/update-password" element={<UpdatePasswordPage />} />
      <Route
        path="/app"
        element={
          <WithCsrfToken>
            <Shell />
          </WithCsrfToken>
        }
      >
        <Route index element={<HomePage />} />
        <Route path=":slug" element={<ListPage />} />
        <Route path=":slug/*" element={<FormPage />} />
      </Route>
      <Route path="*" element={<Navigate to="/app" replace />} />
    </Routes>
  );
}
