// The frame around every page: a skip link, the side navigation and the signed-in tenant.
import { NavLink, Outlet } from 'react-router';
import { apiKey, signOut } from '../api.ts';
import { useTenant } from '../tenant-context.ts';

const TENANT_NAV = [
  { to: '/runs', label: 'Runs' },
  { to: '/approvals', label: 'Approvals' },
  { to: '/tenant', label: 'Tenant' },
  { to: '/pools', label: 'Pools' },
  { to: '/nodes', label: 'Nodes' },
] as const;
const ADMIN_NAV = [{ to: '/tenants', label: 'Tenants' }] as const;

export function Layout() {
  const tenant = useTenant();
  const admin = apiKey.role() === 'admin';
  const nav = admin ? ADMIN_NAV : TENANT_NAV;
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <nav className="sidebar" aria-label="Main">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true">
            K
          </span>
          Keel
        </div>
        <ul>
          {nav.map((item) => (
            <li key={item.to}>
              <NavLink to={item.to} className={({ isActive }) => (isActive ? 'active' : '')}>
                {item.label}
              </NavLink>
            </li>
          ))}
        </ul>
        <div className="sidebar-foot">
          <div className="muted small">{admin ? 'Signed in as' : 'Tenant'}</div>
          <div className="tenant-name" data-testid="tenant-name">
            {admin ? 'operator (admin key)' : (tenant?.tenant.name ?? '…')}
          </div>
          <button type="button" className="btn btn-ghost btn-small" onClick={signOut}>
            Sign out
          </button>
        </div>
      </nav>
      <main id="main" className="content" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}
