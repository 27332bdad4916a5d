/**
 * The form a page shows when no session opened by itself (no pass, not on loopback): the
 * person pastes the world's token, its read token, or a read-only key. The token is sent once
 * to open a session and then forgotten: the page keeps nothing.
 */
import { useState } from 'preact/hooks';
import type { PageConfig } from './config.js';
import { signInWithToken, type SessionInfo } from './session.js';
import { ErrorNote } from './ui.js';

/** Why opening failed before the form, in a person's words (a pass refused, the loopback session refused). */
function openingProblem(error: unknown): string | undefined {
  return error === null || error === undefined ? undefined : 'The page could not open a session by itself';
}

export function SignIn({ config, error, onSession }: { config: PageConfig; error?: unknown; onSession: (session: SessionInfo) => void }) {
  const [token, setToken] = useState('');
  const [scope, setScope] = useState<'write' | 'read'>('write');
  const [busy, setBusy] = useState(false);
  const [refused, setRefused] = useState<unknown>(null);
  const name = `${config.org}/${config.world}`;

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setRefused(null);
    try {
      const session = await signInWithToken(config, token.trim(), scope);
      setToken('');
      onSession(session);
    } catch (err) {
      setRefused(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="card signin" aria-label="Sign in" onSubmit={(e) => void submit(e)}>
      <h2>
        Open <span class="mono">{name}</span>
      </h2>
      <ErrorNote error={error} what={openingProblem(error)} />
      <p>
        Paste the world's token, its read token, or a read-only key (<code>tok_k_…</code>). It opens a session for this browser at this address and is not
        kept by the page.
      </p>
      <label class="field">
        <span>Token or key</span>
        <input type="password" name="token" class="mono wide" autoComplete="off" autoFocus value={token} onInput={(e) => setToken(e.currentTarget.value)} required />
      </label>
      <fieldset class="choice">
        <legend>Open for</legend>
        <label>
          <input type="radio" name="scope" value="write" checked={scope === 'write'} onChange={() => setScope('write')} /> reading and changing
        </label>
        <label>
          <input type="radio" name="scope" value="read" checked={scope === 'read'} onChange={() => setScope('read')} /> reading only
        </label>
      </fieldset>
      <div class="row">
        <button type="submit" class="primary" disabled={busy || token.trim() === ''}>
          Open the world
        </button>
        <span class="hint">A read token or key opens it for reading only.</span>
      </div>
      <ErrorNote error={refused} what="The world refused it" />
    </form>
  );
}
