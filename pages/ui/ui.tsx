/** Small pieces every page uses: an error note and a copy-a-secret field (instants: format.ts, re-exported here). */
import { useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

export { instant, minute } from './format.js';

/** The error as a person reads it: what went wrong, then the code and status to look up. */
export function ErrorNote({ error, what }: { error: unknown; what?: string }) {
  if (error === null || error === undefined) return null;
  const api = error instanceof ApiError ? error : null;
  const message = api?.message ?? (error instanceof Error ? error.message : String(error));
  return (
    <p class="error" role="alert">
      {what !== undefined && <strong>{what}: </strong>}
      {message}
      {api !== null && (
        <span class="code">
          {' '}
          ({api.status === 0 ? 'no answer' : api.status} {api.code})
        </span>
      )}
    </p>
  );
}

/**
 * A secret in a read-only field with a Copy button. The clipboard API exists only in a secure
 * context (https, or loopback); elsewhere the field's text is selected and copied the old way.
 */
export function SecretField({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const field = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      if (navigator.clipboard !== undefined && window.isSecureContext) await navigator.clipboard.writeText(value);
      else {
        field.current?.select();
        if (!document.execCommand('copy')) throw new Error('copy refused');
      }
      setCopied('yes');
    } catch {
      field.current?.select();
      setCopied('failed');
    }
  };
  return (
    <div class="secret">
      <label>
        <span>{label}</span>
        <input readOnly value={value} ref={field} onFocus={(e) => e.currentTarget.select()} />
      </label>
      <button type="button" onClick={copy}>
        Copy
      </button>
      {copied === 'yes' && <span class="hint">copied</span>}
      {copied === 'failed' && <span class="hint">selected: press Ctrl+C</span>}
    </div>
  );
}
