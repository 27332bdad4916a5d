/**
 * A file's `patch` (the unified diff hunks GitHub puts in a commit's, a compare's and a pull
 * request's `files`) as numbered lines, the way GitHub's diff view shows them. Pure (tested in Node).
 */

export interface DiffLine {
  kind: 'hunk' | 'add' | 'del' | 'ctx' | 'note';
  text: string;
  /** The line's number before and after; null on the side it is not on. */
  old: number | null;
  new: number | null;
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

export function parsePatch(patch: string): DiffLine[] {
  const lines = patch.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const out: DiffLine[] = [];
  let oldNo = 0;
  let newNo = 0;
  for (const line of lines) {
    const hunk = HUNK.exec(line);
    if (hunk !== null) {
      oldNo = Number(hunk[1]);
      newNo = Number(hunk[2]);
      out.push({ kind: 'hunk', text: line, old: null, new: null });
    } else if (line.startsWith('+')) {
      out.push({ kind: 'add', text: line.slice(1), old: null, new: newNo++ });
    } else if (line.startsWith('-')) {
      out.push({ kind: 'del', text: line.slice(1), old: oldNo++, new: null });
    } else if (line.startsWith('\\')) {
      out.push({ kind: 'note', text: line.slice(1).trim(), old: null, new: null });
    } else {
      out.push({ kind: 'ctx', text: line.startsWith(' ') ? line.slice(1) : line, old: oldNo++, new: newNo++ });
    }
  }
  return out;
}
