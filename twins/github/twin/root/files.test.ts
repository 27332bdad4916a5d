/**
 * The default branch's files in a refresh, below the HTTP surface: which files are read and
 * which kept (written again from the copy), in batches a call can carry, within the caps.
 */
import { describe, expect, it } from 'vitest';
import type { RootAnswer, RootRead, TwinContext } from '../../../../sdk/twin/types.js';
import { memoryCtx } from '../lib/memory.test-helper.js';
import { KEEP_BYTES, MAX_BLOB_BYTES, MAX_BLOBS, MAX_FILE_BYTES, MAX_TREE_ENTRIES, readKeep, readTree, type FilesData } from './files.js';

const REPO = 7;
const ROOT_TREE = 'f'.repeat(40);
const id = (n: number): string => n.toString(16).padStart(40, '0');

/** A context whose puts are counted per record (what a call writes). */
function counted(): { ctx: TwinContext; written: string[] } {
  const ctx = memoryCtx();
  const written: string[] = [];
  const put = ctx.tree.put.bind(ctx.tree);
  ctx.tree.put = (type, key, value) => {
    written.push(`${type}/${key}`);
    put(type, key, value);
  };
  return { ctx, written };
}

function listing(files: { n: number; size: number }[]): RootAnswer {
  const body = { sha: ROOT_TREE, truncated: false, tree: files.map((f) => ({ path: `f${String(f.n).padStart(5, '0')}`, mode: '100644', type: 'blob', sha: id(f.n), size: f.size })) };
  return { status: 200, headers: {}, body, bodyText: JSON.stringify(body) };
}

const data = (read: RootRead) => read.data as FilesData & { keep: string[] };

describe('the files a refresh reads and keeps', () => {
  it(`reads the files the copy lacks, keeps the rest in batches of ${KEEP_BYTES / 1024 / 1024} MiB (the first now, the others on later reads)`, () => {
    const { ctx, written } = counted();
    // Held files of the largest size copied: `per` to a batch, four batches (the last of one); two missing; one past the cap.
    const per = Math.floor(KEEP_BYTES / MAX_BLOB_BYTES);
    const held = Array.from({ length: 3 * per + 1 }, (_, i) => ({ n: i + 1, size: MAX_BLOB_BYTES }));
    for (const f of held) ctx.tree.put('obj', `${REPO}:${id(f.n)}`, { t: 'blob', b64: '', size: f.size });
    written.length = 0;
    const [a, b, c] = [1000, 1001, 1002];
    const files = [...held, { n: a, size: 10 }, { n: b, size: MAX_BLOB_BYTES + 1 }, { n: c, size: 20 }];
    const reads = readTree({ step: 'tree', repoId: REPO, sha: ROOT_TREE }, listing(files), ctx);
    const batch = (k: number): string[] => held.slice(k * per, (k + 1) * per).map((f) => id(f.n));
    // The root tree written, and the first batch kept in this call.
    expect(written).toEqual([`obj/${REPO}:${ROOT_TREE}`, ...batch(0).map((k) => `obj/${REPO}:${k}`)]);
    expect(reads.map((r) => r.path)).toEqual([`/git/blobs/${id(a)}`, `/git/blobs/${id(c)}`, `/git/trees/${ROOT_TREE}`]);
    expect(reads.map((r) => data(r).keep)).toEqual([batch(1), batch(2), batch(3)]);
    written.length = 0;
    readKeep(data(reads[2] as RootRead) as Extract<FilesData, { step: 'keep' }>, ctx);
    expect(written).toEqual([`obj/${REPO}:${id(3 * per + 1)}`]);
  });

  it(`copies files in path order until ${MAX_BLOBS} or ${MAX_FILE_BYTES / 1024 / 1024} MiB`, () => {
    const { ctx } = counted();
    const many = Array.from({ length: MAX_BLOBS + 5 }, (_, i) => ({ n: i + 1, size: 1 }));
    expect(readTree({ step: 'tree', repoId: REPO, sha: ROOT_TREE }, listing(many), ctx)).toHaveLength(MAX_BLOBS);
    const big = Array.from({ length: 40 }, (_, i) => ({ n: i + 1, size: MAX_BLOB_BYTES }));
    expect(readTree({ step: 'tree', repoId: REPO, sha: ROOT_TREE }, listing(big), ctx)).toHaveLength(MAX_FILE_BYTES / MAX_BLOB_BYTES);
  });

  it(`copies no files of a listing GitHub truncated, or of more than ${MAX_TREE_ENTRIES} entries`, () => {
    const { ctx, written } = counted();
    const answer = listing([{ n: 1, size: 1 }]);
    const body = { ...(answer.body as object), truncated: true };
    expect(readTree({ step: 'tree', repoId: REPO, sha: ROOT_TREE }, { ...answer, body, bodyText: JSON.stringify(body) }, ctx)).toEqual([]);
    const many = Array.from({ length: MAX_TREE_ENTRIES + 1 }, (_, i) => ({ n: i + 1, size: 1 }));
    expect(readTree({ step: 'tree', repoId: REPO, sha: ROOT_TREE }, listing(many), ctx)).toEqual([]);
    expect(readTree({ step: 'tree', repoId: REPO, sha: ROOT_TREE }, listing(many.slice(1)), ctx)).toHaveLength(MAX_BLOBS);
    expect(written.filter((w) => w === `obj/${REPO}:${ROOT_TREE}`)).toHaveLength(1);
  });
});
