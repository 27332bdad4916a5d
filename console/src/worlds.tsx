/**
 * The host's worlds: the list (branches under the world they branch from), the form that makes
 * a world, and the one-time showing of a world's new tokens.
 */
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from './api.js';
import type { AdminApi, Tokens, WorldRow } from './api.js';
import { ErrorNote, SecretField, minute } from '../../pages/ui/index.js';

/** The rows in the order shown: each world, then its branches (depth first), each with its depth. */
export function treeOrder(rows: WorldRow[]): { row: WorldRow; depth: number }[] {
  const names = new Set(rows.map((r) => r.name));
  const children = new Map<string, WorldRow[]>();
  for (const row of rows) {
    // A branch whose parent is not listed (removed meanwhile) is shown at the top level.
    const parent = row.base !== null && names.has(row.base) ? row.base : '';
    children.set(parent, [...(children.get(parent) ?? []), row]);
  }
  const out: { row: WorldRow; depth: number }[] = [];
  const visit = (parent: string, depth: number) => {
    for (const row of children.get(parent) ?? []) {
      out.push({ row, depth });
      visit(row.name, depth + 1);
    }
  };
  visit('', 0);
  return out;
}

/** A world's new tokens, shown until the person hides them; the list never shows them again. */
export function TokenReveal({ tokens, why, onHide }: { tokens: Tokens; why: string; onHide: () => void }) {
  return (
    <section class="reveal" aria-label="New tokens">
      <h2>
        {why} <span class="mono">{tokens.name}</span>
      </h2>
      <p>These tokens are shown once. Copy them now: this page will not show them again.</p>
      <SecretField label="Token (opens everything)" value={tokens.token} />
      <SecretField label="Read token (reads only)" value={tokens.readToken} />
      <button type="button" onClick={onHide}>
        I have copied them: hide
      </button>
    </section>
  );
}

export function CreateForm({ admin, vendors, onCreated }: { admin: AdminApi; vendors: string[] | null; onCreated: (row: WorldRow) => void }) {
  const [org, setOrg] = useState('');
  const [world, setWorld] = useState('');
  const [owner, setOwner] = useState('');
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    if (chosen.size === 0) {
      setError(new Error('Choose at least one vendor.'));
      return;
    }
    setBusy(true);
    try {
      const input: { org: string; world: string; vendors: string[]; owner?: string } = { org: org.trim(), world: world.trim(), vendors: [...chosen].sort() };
      if (owner.trim() !== '') input.owner = owner.trim();
      const row = await admin.create(input);
      setWorld('');
      setChosen(new Set());
      onCreated(row);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const toggle = (vendor: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(vendor);
    else next.delete(vendor);
    setChosen(next);
  };

  return (
    <form class="create" onSubmit={(e) => void submit(e)} aria-label="Create a world">
      <h2>Create a world</h2>
      <div class="fields">
        <label>
          Org <input name="org" class="mono" value={org} onInput={(e) => setOrg(e.currentTarget.value)} required placeholder="acme" />
        </label>
        <label>
          World <input name="world" class="mono" value={world} onInput={(e) => setWorld(e.currentTarget.value)} required placeholder="shop" />
        </label>
        <label>
          Owner <input name="owner" class="mono" value={owner} onInput={(e) => setOwner(e.currentTarget.value)} placeholder="optional" />
        </label>
      </div>
      <fieldset>
        <legend>Vendors</legend>
        {vendors === null ? (
          <span class="muted">Loading…</span>
        ) : (
          vendors.map((v) => (
            <label key={v} class="check">
              <input type="checkbox" name="vendor" value={v} checked={chosen.has(v)} onChange={(e) => toggle(v, e.currentTarget.checked)} /> {v}
            </label>
          ))
        )}
      </fieldset>
      <button type="submit" class="primary" disabled={busy}>
        Create world
      </button>
      <ErrorNote error={error} what="The world was not created" />
    </form>
  );
}

type Pending = { name: string; action: 'rotate' | 'remove' };

/** What a refused removal means, in the page's words where the host's code is known. */
function removalError(error: unknown, name: string, rows: WorldRow[]): unknown {
  if (error instanceof ApiError && error.code === 'world_has_branches') {
    const branches = rows.filter((r) => r.base === name).map((r) => r.name);
    const which = branches.length > 0 ? ` (${branches.join(', ')})` : '';
    return new ApiError(error.status, error.code, `${name} has branches${which}. Remove its branches first, then the world.`);
  }
  return error;
}

export function WorldsTable({
  admin,
  rows,
  selected,
  onSelect,
  onRotated,
  onRemoved,
}: {
  admin: AdminApi;
  rows: WorldRow[];
  selected: string | null;
  onSelect: (name: string) => void;
  onRotated: (tokens: Tokens) => void;
  onRemoved: (name: string) => void;
}) {
  const [pending, setPending] = useState<Pending | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const confirm = async () => {
    if (pending === null) return;
    setBusy(true);
    setError(null);
    try {
      if (pending.action === 'rotate') onRotated(await admin.rotate(pending.name));
      else {
        await admin.remove(pending.name);
        onRemoved(pending.name);
      }
      setPending(null);
    } catch (e) {
      setError(pending.action === 'remove' ? removalError(e, pending.name, rows) : e);
    } finally {
      setBusy(false);
    }
  };

  if (rows.length === 0) return <p class="muted">No worlds yet. Create one below.</p>;
  const branchCount = (name: string) => rows.filter((r) => r.base === name).length;

  return (
    <>
      <div class="scroll">
        <table aria-label="Worlds" class="worlds">
          <thead>
            <tr>
              <th>World</th>
              <th>Twins</th>
              <th>Owner</th>
              <th>Budget</th>
              <th class="num">Branches</th>
              <th>Created</th>
              <th>Expires</th>
              <th>
                <span class="sr">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {treeOrder(rows).map(({ row, depth }) => (
              <Fragment key={row.name}>
                <tr class={row.name === selected ? 'selected' : ''} data-world={row.name}>
                  <td class="mono nowrap" style={{ paddingLeft: `${0.6 + depth * 1.4}rem` }}>
                    {depth > 0 && (
                      <span class="muted" title={`branch of ${row.base ?? ''}`}>
                        ↳{' '}
                      </span>
                    )}
                    {row.name}
                    {row.open && <span class="badge" title="loaded in memory now">open</span>}
                  </td>
                  <td class="mono">{row.twins.map((t) => t.vendor).join(' ')}</td>
                  <td class="mono">{row.owner ?? <span class="muted">—</span>}</td>
                  <td class="mono">{row.budget}</td>
                  <td class="num">{branchCount(row.name) || <span class="muted">0</span>}</td>
                  <td class="nowrap" title={row.createdAt}>{minute(row.createdAt)}</td>
                  <td class="nowrap" title={row.expiresAt ?? 'never'}>{row.expiresAt === null ? <span class="muted">never</span> : minute(row.expiresAt)}</td>
                  <td class="actions nowrap">
                    <button type="button" onClick={() => onSelect(row.name)} aria-label={`Open ${row.name}`}>
                      Open
                    </button>
                    <button type="button" onClick={() => (setError(null), setPending({ name: row.name, action: 'rotate' }))} aria-label={`Rotate tokens of ${row.name}`}>
                      Rotate tokens
                    </button>
                    <button type="button" class="danger" onClick={() => (setError(null), setPending({ name: row.name, action: 'remove' }))} aria-label={`Remove ${row.name}`}>
                      Remove
                    </button>
                  </td>
                </tr>
                {pending?.name === row.name && (
                  <tr class="confirm">
                    <td colSpan={8}>
                      {pending.action === 'remove' ? (
                        <span>
                          Remove <strong class="mono">{row.name}</strong> and all its state? This cannot be undone.
                        </span>
                      ) : (
                        <span>
                          Rotate the tokens of <strong class="mono">{row.name}</strong>? Apps using the old tokens are refused from the next request.
                        </span>
                      )}{' '}
                      <button type="button" class={pending.action === 'remove' ? 'danger' : 'primary'} disabled={busy} onClick={() => void confirm()}>
                        {pending.action === 'remove' ? 'Yes, remove' : 'Yes, rotate'}
                      </button>{' '}
                      <button type="button" onClick={() => (setPending(null), setError(null))}>
                        Cancel
                      </button>
                      <ErrorNote error={error} what={pending.action === 'rotate' ? 'The tokens were not rotated' : 'The world was not removed'} />
                    </td>
                  </tr>
                )}
              </Fragment>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
