/** Small pieces every page uses: an error note, instants, a copy-a-secret field. */
import { useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

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

/** An ISO instant as `2026-05-01 09:00:00 UTC` (the host's instants are UTC); milliseconds only when not zero. */
export function instant(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  return iso.replace('T', ' ').replace(/(\.000)?Z$/, ' UTC');
}

/** An ISO instant to the minute, `2026-05-01 09:00 UTC`, for lists where seconds are noise. */
export function minute(iso: string): string {
  return iso.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC');
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
