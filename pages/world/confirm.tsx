/** A destructive action asked twice: the button, then "Yes, …" and Cancel in its place. */
import { useState } from 'preact/hooks';
import { ErrorNote } from '../ui/index.js';

export function ConfirmButton({ label, confirm, question, onConfirm, what }: { label: string; confirm: string; question: string; onConfirm: () => Promise<void>; what: string }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  if (!asking) {
    return (
      <button type="button" class="danger" onClick={() => (setError(null), setAsking(true))}>
        {label}
      </button>
    );
  }
  return (
    <span class="confirm">
      <span>{question}</span>{' '}
      <button
        type="button"
        class="danger"
        disabled={busy}
        onClick={() => {
          setBusy(true);
          setError(null);
          onConfirm().then(
            () => {
              setBusy(false);
              setAsking(false);
            },
            (e: unknown) => {
              setBusy(false);
              setError(e);
            },
          );
        }}
      >
        {confirm}
      </button>{' '}
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
      <ErrorNote error={error} what={what} />
    </span>
  );
}
