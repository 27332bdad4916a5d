/**
 * Deploying a changeset performs its changes against the real vendors (each twin's root): a
 * dialog asks the person to type the changeset's name first, and the world is sent that name as
 * `{ confirm }` (a browser session's deploy without it is refused). A refusal stays in the
 * dialog in the world's words: not verified, no root, a root answering errors.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorNote } from '../ui/index.js';
import type { Changeset, Deployed } from '../ui/index.js';
import type { WorldPageApi } from './api.js';

export function DeployDialog({ api, changeset, onDone, onClose }: { api: WorldPageApi; changeset: Changeset; onDone: (deployed: Deployed | null) => void; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const d = dialog.current;
    if (d !== null && !d.open) d.showModal();
    return () => d?.close();
  }, []);

  const left = changeset.changes.filter((c) => c.state !== 'deployed');
  const twins = [...new Set(left.map((c) => c.twin))];
  const verified = changeset.verification !== null && changeset.verification.current && changeset.verification.pass;
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onDone(await api.deploy(changeset.name, typed));
    } catch (err) {
      setError(err);
      // A failed deploy may have performed some changes (receipts recorded): the view reads them again.
      onDone(null);
    } finally {
      setBusy(false);
    }
  };
  return (
    <dialog
      ref={dialog}
      class="deploy-dialog"
      aria-labelledby="deploy-heading"
      onCancel={(e) => {
        e.preventDefault();
        if (!busy) onClose();
      }}
    >
      <form onSubmit={(e) => void submit(e)}>
        <h3 id="deploy-heading">
          Deploy <span class="mono">{changeset.name}</span>
        </h3>
        <p>
          This performs {left.length} change{left.length === 1 ? '' : 's'} against the real {twins.length === 1 ? 'vendor' : 'vendors'} behind{' '}
          {twins.map((t, i) => (
            <span key={t}>
              {i > 0 && ', '}
              <span class="mono">{t}</span>
            </span>
          ))}
          , oldest first. What a vendor has done is not undone from here.
        </p>
        {!verified && <p class="note">Not verified on the current hash with every check passing: the world will refuse to deploy it. Verify it first.</p>}
        <label class="field">
          <span>
            Type <strong class="mono">{changeset.name}</strong> to confirm
          </span>
          <input name="confirm" class="mono" autocomplete="off" spellcheck={false} value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
        </label>
        <ErrorNote error={error} what="Not deployed" />
        <div class="row">
          <button type="submit" class="danger" disabled={busy || typed !== changeset.name}>
            {busy ? 'Deploying…' : 'Deploy'}
          </button>
          <button type="button" disabled={busy} onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
