import { useFrappeAuth } from 'frappe-react-sdk';
import { Button, Menu, MenuItem, MenuTrigger, Popover } from 'react-aria-components';
import { Link, Outlet } from 'react-router';
import { text } from '../text';
import { ListBreadcrumbs } from './Breadcrumbs';
import { Flash } from './Flash';
import { SearchBox } from './SearchBox';

/** The signed-in frame: a skip link, the bar (home, search, account menu) and the page. */
export function Shell() {
  const { currentUser, logout } = useFrappeAuth();
  const user = currentUser ?? '';
  const signOut = async () => {
    await logout().catch(() => undefined);
    window.location.assign('/login');
  };
  return (
    <>
      <a className="skip-link" href="#main">
        {text.skipToContent}
      </a>
      <header className="bar">
        <Link to="/app" className="brand">
          {text.appName}
        </Link>
        <SearchBox />
        <MenuTrigger>
          <Button className="button button-quiet">
            <span aria-hidden="true" className="avatar">
              {user.slice(0, 1).toUpperCase() || '?'}
            </span>
            <span className="visually-hidden">{text.shell.account}</span>
            <span className="user-name">{user}</span>
          </Button>
          <Popover placement="bottom end" className="popover">
            <Menu className="menu" onAction={(key) => key === 'logout' && void signOut()}>
              <MenuItem id="logout" className="menu-item">
                {text.shell.logout}
              </MenuItem>
            </Menu>
          </Popover>
        </MenuTrigger>
      </header>
      <main id="main" tabIndex={-1}>
        <ListBreadcrumbs />
        <Flash />
        <Outlet />
      </main>
    </>
  );
}
