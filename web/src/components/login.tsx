// The sign-in screen: asks for a tenant API key and checks it against the API before keeping it for
// this tab.
import { useState, type FormEvent } from 'react';
import { ApiError, apiKey, dashboardApi } from '../api.ts';

export function Login({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    const candidate = key.trim();
    try {
      await dashboardApi.tenant(candidate);
      apiKey.set(candidate, 'tenant');
      onSignedIn();
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 401)) {
        setError(`Could not reach Keel: ${(e as Error).message}`);
      } else {
        // Not a tenant key: it may be the operator's admin key.
        try {
          await dashboardApi.allTenants(candidate);
          apiKey.set(candidate, 'admin');
          onSignedIn();
        } catch {
          setError('This API key is not recognised.');
        }
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="login">
      <form className="login-card" onSubmit={submit} aria-labelledby="login-title">
        <div className="brand brand-large">
          <span className="brand-mark" aria-hidden="true">
            K
          </span>
          Keel
        </div>
        <h1 id="login-title">Sign in to the dashboard</h1>
        <p className="muted">
          Paste a tenant API key (or the operator's <code>KEEL_ADMIN_KEY</code> for all tenants). It
          is kept in this browser tab only and sent as a bearer token.
        </p>
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          // biome-ignore lint/a11y/noAutofocus: the sign-in page has this one field; focusing it is what a user expects.
          autoFocus
          required
          value={key}
          onChange={(e) => setKey(e.target.value)}
          placeholder="keel_…"
        />
        {error !== undefined ? (
          <p className="form-error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" className="btn btn-primary" disabled={busy || key.trim() === ''}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
        <p className="muted small">
          <code>keel dev</code> prints a key at start; <code>POST /v1/admin/tenants</code> issues
          new ones.
        </p>
      </form>
    </main>
  );
}
