/**
 * A document editor: a textarea as tall as its document with line numbers beside it, and a line marked where the world
 * said the document is wrong, with the world's words under that line's number. No editor library:
 * the documents are small and a textarea keeps the browser's own undo, search and accessibility.
 */
import { useEffect, useRef } from 'preact/hooks';

export interface Marked {
  /** 1-based. */
  line: number;
  message: string;
}

/** The offsets of line `line`'s start and end in `text`. */
function lineRange(text: string, line: number): [number, number] {
  let start = 0;
  for (let n = 1; n < line; n++) {
    const nl = text.indexOf('\n', start);
    if (nl === -1) return [text.length, text.length];
    start = nl + 1;
  }
  const end = text.indexOf('\n', start);
  return [start, end === -1 ? text.length : end];
}

export function Editor({ value, onInput, marked, label, rows = 18 }: { value: string; onInput: (value: string) => void; marked: Marked | null; label: string; rows?: number }) {
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const lines = Math.max(value.split('\n').length, rows);

  // A new mark selects its line and brings it into view, so the person lands where the problem is.
  useEffect(() => {
    const el = area.current;
    if (marked === null || el === null) return;
    const [start, end] = lineRange(el.value, marked.line);
    el.focus({ preventScroll: true });
    el.setSelectionRange(start, end);
    gutter.current?.querySelector('.marked')?.scrollIntoView({ block: 'center' });
  }, [marked]);

  return (
    <div class={marked === null ? 'editor' : 'editor has-mark'}>
      <div class="editor-gutter" ref={gutter} aria-hidden="true">
        {Array.from({ length: lines }, (_, i) => (
          <div key={i} class={marked?.line === i + 1 ? 'marked' : undefined} title={marked?.line === i + 1 ? marked.message : undefined}>
            {i + 1}
          </div>
        ))}
      </div>
      <textarea
        ref={area}
        class="mono"
        aria-label={label}
        aria-invalid={marked !== null}
        spellcheck={false}
        rows={rows}
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
    </div>
  );
}
