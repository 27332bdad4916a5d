/**
 * A world's clock as a person reads and moves it: the instant, whether it is set, a form to set
 * it and one to advance it. How it reaches the world (a session, a token) is the caller's.
 */
import { useState } from 'preact/hooks';
import { Badge } from './badge.js';
import { instant } from './format.js';
import { Loading } from './states.js';
import type { Clock } from './types.js';
import { ErrorNote } from './ui.js';

export interface ClockControlsProps {
  clock: Clock | null;
  /** `PUT …/clock { at }`; answers the new clock. */
  onSet: (at: string) => Promise<Clock>;
  /** `POST …/clock/advance { by }`; answers the new clock. */
  onAdvance: (by: string) => Promise<Clock>;
  /** Told the new clock after a change (the caller reloads what a clock move may change). */
  onChanged: (clock: Clock) => void;
  /** Hides the forms (a read session). */
  readOnly?: boolean;
}

export function ClockControls({ clock, onSet, onAdvance, onChanged, readOnly = false }: ClockControlsProps) {
  const [at, setAt] = useState('');
  const [by, setBy] = useState('1h');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const act = async (what: () => Promise<Clock>) => {
    setBusy(true);
    setError(null);
    try {
      onChanged(await what());
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="clock-controls">
      {clock === null ? (
        <Loading what="the clock" />
      ) : (
        <p class="clock" data-frozen={String(clock.frozen)}>
          <span class="mono">{instant(clock.at)}</span>{' '}
          <Badge tone={clock.frozen ? 'blue' : 'gray'}>{clock.frozen ? 'set: moves only when set or advanced' : 'wall clock: not set'}</Badge>
        </p>
      )}
      {!readOnly && (
        <>
          <form
            class="inline"
            onSubmit={(e) => {
              e.preventDefault();
              void act(() => onSet(at.trim()));
            }}
          >
            <label>
              Set to <input name="at" class="mono" placeholder="2026-05-01T09:00:00Z" value={at} onInput={(e) => setAt(e.currentTarget.value)} required />
            </label>
            <button type="submit" disabled={busy}>
              Set clock
            </button>
          </form>
          <form
            class="inline"
            onSubmit={(e) => {
              e.preventDefault();
              void act(() => onAdvance(by.trim()));
            }}
          >
            <label>
              Advance by <input name="by" class="mono short" placeholder="1h" value={by} onInput={(e) => setBy(e.currentTarget.value)} required />
            </label>
            <button type="submit" disabled={busy || clock?.frozen === false} title={clock?.frozen === false ? 'Set the clock first: only a set clock advances' : undefined}>
              Advance
            </button>
            <span class="hint">a number and s, m, h or d{clock?.frozen === false ? '; set the clock first' : ''}</span>
          </form>
          <ErrorNote error={error} what="The clock did not change" />
        </>
      )}
    </div>
  );
}
