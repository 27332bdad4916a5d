/**
 * Changed files as GitHub's "Files changed" shows them: a summary line, then each file with its
 * status, its counts and its hunks. A file without a `patch` (binary, or past GitHub's diff
 * limits) says so. Past a budget of drawn lines, further diffs wait behind "Load diff".
 */
import { useState } from 'preact/hooks';
import { parsePatch } from '../diff.js';
import { Box } from '../parts.js';
import type { DiffFile } from '../types.js';

/** Lines drawn before the next files wait for a click, as GitHub defers large diffs. */
const LINES_DRAWN = 3000;

const STATUS: Record<string, string> = { added: 'Added', removed: 'Deleted', modified: 'Modified', renamed: 'Renamed', copied: 'Copied', changed: 'Changed', unchanged: 'Unchanged' };

/** Five squares, green for additions and red for deletions, as GitHub's diffstat. */
function DiffStat({ additions, deletions }: { additions: number; deletions: number }) {
  const total = additions + deletions;
  const green = total === 0 ? 0 : Math.round((additions / total) * 5);
  const red = total === 0 ? 0 : Math.min(5 - green, Math.round((deletions / total) * 5));
  return (
    <span class="diffstat" title={`${additions} additions & ${deletions} deletions`}>
      <span class="add-count">+{additions.toLocaleString('en-US')}</span> <span class="del-count">−{deletions.toLocaleString('en-US')}</span>{' '}
      {[0, 1, 2, 3, 4].map((i) => (
        <span key={i} class={`sq ${i < green ? 'sq-add' : i < green + red ? 'sq-del' : ''}`} />
      ))}
    </span>
  );
}

function Hunks({ patch }: { patch: string }) {
  return (
    <table class="diff" aria-label="Diff">
      <tbody>
        {parsePatch(patch).map((l, i) =>
          l.kind === 'hunk' ? (
            <tr key={i} class="hunk">
              <td class="num" colSpan={2} />
              <td class="line">{l.text}</td>
            </tr>
          ) : (
            <tr key={i} class={l.kind}>
              <td class="num" data-line={l.old ?? ''} />
              <td class="num" data-line={l.new ?? ''} />
              <td class="line">
                <span class="sign">{l.kind === 'add' ? '+' : l.kind === 'del' ? '-' : ' '}</span>
                {l.text}
              </td>
            </tr>
          ),
        )}
      </tbody>
    </table>
  );
}

function FileDiff({ file, open }: { file: DiffFile; open: boolean }) {
  const [shown, setShown] = useState(open);
  const name = file.previous_filename !== undefined && file.status === 'renamed' ? `${file.previous_filename} → ${file.filename}` : file.filename;
  return (
    <Box
      class="file-diff"
      header={
        <div class="file-diff-head">
          <DiffStat additions={file.additions} deletions={file.deletions} />
          <strong class="file-name">{name}</strong>
          <span class={`status status-${file.status}`}>{STATUS[file.status] ?? file.status}</span>
        </div>
      }
    >
      {file.patch === undefined ? (
        <p class="note">{file.additions + file.deletions === 0 && file.status !== 'renamed' ? 'Binary file not shown.' : 'Large diffs are not rendered by default: GitHub leaves this patch out.'}</p>
      ) : file.patch === '' ? (
        <p class="note">{file.status === 'renamed' ? 'File renamed without changes.' : 'Empty file.'}</p>
      ) : shown ? (
        <Hunks patch={file.patch} />
      ) : (
        <p class="note">
          <button type="button" class="link-button" onClick={() => setShown(true)}>
            Load diff
          </button>{' '}
          Large diffs wait for a click.
        </p>
      )}
    </Box>
  );
}

/** `files` of a commit, a compare or a pull request. */
export function FileDiffs({ files, additions, deletions }: { files: DiffFile[]; additions?: number; deletions?: number }) {
  const adds = additions ?? files.reduce((n, f) => n + f.additions, 0);
  const dels = deletions ?? files.reduce((n, f) => n + f.deletions, 0);
  let drawn = 0;
  return (
    <div class="file-diffs">
      <p class="diff-summary">
        Showing <strong>{files.length.toLocaleString('en-US')} changed {files.length === 1 ? 'file' : 'files'}</strong> with <strong>{adds.toLocaleString('en-US')} {adds === 1 ? 'addition' : 'additions'}</strong> and{' '}
        <strong>{dels.toLocaleString('en-US')} {dels === 1 ? 'deletion' : 'deletions'}</strong>.
      </p>
      {files.map((f, i) => {
        const lines = f.patch === undefined ? 0 : f.patch.split('\n').length;
        const open = drawn + lines <= LINES_DRAWN || drawn === 0;
        if (open) drawn += lines;
        return <FileDiff key={`${i}:${f.filename}`} file={f} open={open} />;
      })}
    </div>
  );
}
