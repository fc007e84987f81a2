// Entry point: sign-in gate, the tenant context, and the routes (the server answers each with
// index.html).
import { StrictMode, Suspense, lazy, useEffect, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { Navigate, RouterProvider, createBrowserRouter } from 'react-router';
import { apiKey, dashboardApi, onSignedOut, type TenantOverview } from './api.ts';
import { Layout } from './components/layout.tsx';
import { Login } from './components/login.tsx';
import { ApprovalsPage } from './pages/approvals.tsx';
import { NodesPage } from './pages/nodes.tsx';
import { RunPage } from './pages/run-page.tsx';
import { RunsPage } from './pages/runs-list.tsx';
import { TenantPage } from './pages/tenant.tsx';
import { TenantsPage } from './pages/tenants.tsx';
import { TenantContext } from './tenant-context.ts';
import './styles.css';

// The charts library is most of the bundle: it loads only when the pools page is opened.
const PoolsPage = lazy(() => import('./pages/pools.tsx').then((m) => ({ default: m.PoolsPage })));

/** The operator (admin key) sees the tenants overview only: runs belong to tenants' keys. */
const adminRouter = () =>
  createBrowserRouter([
    {
      path: '/',
      element: <Layout />,
      children: [
        { index: true, element: <Navigate to="/tenants" replace /> },
        { path: 'tenants', element: <TenantsPage /> },
        { path: '*', element: <Navigate to="/tenants" replace /> },
      ],
    },
  ]);

const tenantRouter = () =>
  createBrowserRouter([
    {
      path: '/',
      element: <Layout />,
      children: [
        { index: true, element: <Navigate to="/runs" replace /> },
        { path: 'runs', element: <RunsPage /> },
        { path: 'runs/:id', element: <RunPage /> },
        { path: 'tenant', element: <TenantPage /> },
        {
          path: 'pools',
          element: (
            <Suspense fallback={<p className="empty">Loading…</p>}>
              <PoolsPage />
            </Suspense>
          ),
        },
        { path: 'nodes', element: <NodesPage /> },
        { path: 'approvals', element: <ApprovalsPage /> },
        { path: 'tenants', element: <Navigate to="/tenant" replace /> },
      ],
    },
  ]);

function App() {
  const [signedIn, setSignedIn] = useState(apiKey.get() !== null);
  const [tenant, setTenant] = useState<TenantOverview>();
  useEffect(
    () =>
      onSignedOut(() => {
        setSignedIn(false);
        setTenant(undefined);
      }),
    [],
  );
  const role = signedIn ? apiKey.role() : undefined;
  useEffect(() => {
    if (role === 'tenant') dashboardApi.tenant().then(setTenant, () => undefined);
  }, [role]);
  // One router per sign-in: its history listener goes away with it.
  // biome-ignore lint/correctness/useExhaustiveDependencies: `signedIn` is the trigger: each sign-in gets a new router.
  const router = useMemo(
    () => (role === undefined ? undefined : role === 'admin' ? adminRouter() : tenantRouter()),
    [role, signedIn],
  );
  useEffect(() => () => router?.dispose(), [router]);
  if (router === undefined) return <Login onSignedIn={() => setSignedIn(true)} />;
  return (
    <TenantContext.Provider value={tenant}>
      <RouterProvider router={router} />
    </TenantContext.Provider>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
