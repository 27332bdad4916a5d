/**
 * The console page: asks for the host's admin token (kept in this tab's sessionStorage), then
 * shows the worlds, the form that makes one, and the world chosen in the list.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { AdminApi, ApiError } from './api.js';
import type { Tokens, WorldRow } from './api.js';
import { ErrorNote } from '../../pages/ui/index.js';
import { WorldPanel } from './world.js';
import { CreateForm, TokenReveal, WorldsTable } from './worlds.js';

const TOKEN_KEY = 'kit-console-admin-token';

function TokenForm({ base, refused, onToken }: { base: string; refused: boolean; onToken: (token: string) => void }) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [refusedNow, setRefusedNow] = useState(refused);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setRefusedNow(false);
    try {
      // Tried before it is kept: a token the host refuses is never stored.
      await new AdminApi(base, token.trim()).worlds();
      onToken(token.trim());
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setRefusedNow(true);
      else setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="login" onSubmit={(e) => void submit(e)}>
      <h2>Admin token</h2>
      <p>
        The host printed its admin token when it started; it is also in <code>.kit-host/admin</code> beside the host's worlds. This tab keeps it until
        it is closed.
      </p>
      {refusedNow && (
        <p class="error" role="alert">
          The host refused this admin token (401 unauthenticated). Check it and enter it again.
        </p>
      )}
      <ErrorNote error={error} what="Could not check the token" />
      <div class="row">
        <label>
          Admin token{' '}
          <input type="password" name="token" class="mono wide" autoComplete="off" autoFocus value={token} onInput={(e) => setToken(e.currentTarget.value)} required />
        </label>
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
      </div>
    </form>
  );
}

function Console({ admin, onForget }: { admin: AdminApi; onForget: () => void }) {
  const [rows, setRows] = useState<WorldRow[] | null>(null);
  const [vendors, setVendors] = useState<string[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [reveal, setReveal] = useState<{ tokens: Tokens; why: string } | null>(null);
  const [selected, setSelected] = useState<string | null>(() => decodeURIComponent(location.hash.slice(1)) || null);

  const load = async () => {
    try {
      setRows(await admin.worlds());
      setError(null);
    } catch (e) {
      setError(e);
    }
  };

  useEffect(() => {
    void load();
    admin.vendors().then(setVendors, (e: unknown) => setError(e));
  }, [admin]);

  const select = (name: string | null) => {
    setSelected(name);
    history.replaceState(null, '', name === null ? location.pathname : `#${encodeURIComponent(name)}`);
    if (name !== null) requestAnimationFrame(() => document.querySelector('.panel')?.scrollIntoView({ behavior: 'smooth', block: 'start' }));
  };

  const row = rows?.find((r) => r.name === selected) ?? null;

  return (
    <>
      {reveal !== null && <TokenReveal tokens={reveal.tokens} why={reveal.why} onHide={() => setReveal(null)} />}
      <section aria-labelledby="worlds-heading">
        <header class="panel-head">
          <h2 id="worlds-heading">Worlds</h2>
          <div class="actions">
            <button type="button" onClick={() => void load()}>
              Refresh
            </button>
            <button type="button" onClick={onForget}>
              Forget admin token
            </button>
          </div>
        </header>
        <ErrorNote error={error} what="The host's worlds could not be read" />
        {rows === null ? (
          !error && <p class="muted">Loading…</p>
        ) : (
          <WorldsTable
            admin={admin}
            rows={rows}
            selected={selected}
            onSelect={select}
            onRotated={(tokens) => {
              setReveal({ tokens, why: 'New tokens for' });
              void load();
            }}
            onRemoved={(name) => {
              if (selected === name) select(null);
              setReveal((shown) => (shown?.tokens.name === name ? null : shown));
              void load();
            }}
          />
        )}
      </section>
      <CreateForm
        admin={admin}
        vendors={vendors}
        onCreated={(created) => {
          setReveal({ tokens: { name: created.name, token: created.token, readToken: created.readToken }, why: 'Created' });
          void load();
        }}
      />
      {/* Keyed on the token: after a rotation the panel starts again with the new one. */}
      {row !== null && <WorldPanel key={`${row.name} ${row.token}`} base={admin.base} row={row} onClose={() => select(null)} />}
      {rows !== null && selected !== null && row === null && <p class="error">No world {selected} on this host.</p>}
    </>
  );
}

export function App({ base }: { base: string }) {
  const [token, setToken] = useState<string | null>(() => sessionStorage.getItem(TOKEN_KEY));
  const [refused, setRefused] = useState(false);

  const forget = (wasRefused: boolean) => {
    sessionStorage.removeItem(TOKEN_KEY);
    setRefused(wasRefused);
    setToken(null);
  };
  const admin = useMemo(() => (token === null ? null : new AdminApi(base, token, () => forget(true))), [base, token]);

  return (
    <>
      <header class="top">
        <h1>twinkit host</h1>
        <span class="mono host">{base}</span>
      </header>
      <main>
        {admin === null ? (
          <TokenForm
            base={base}
            refused={refused}
            onToken={(t) => {
              sessionStorage.setItem(TOKEN_KEY, t);
              setRefused(false);
              setToken(t);
            }}
          />
        ) : (
          <Console admin={admin} onForget={() => forget(false)} />
        )}
      </main>
    </>
  );
}
