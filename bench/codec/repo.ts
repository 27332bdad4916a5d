/**
 * A large git repository made locally for the codec bench, and the pack a `git clone` of it
 * receives: `git fast-import` writes `commits` commits over `files` source-like files (each
 * commit edits a few lines of a few files, so the clone's pack holds many deltas, as a real
 * project's does), then `git clone --bare --no-local` fetches it through upload-pack.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const WORDS = 'const let return function export import from if else for while await async type interface value record request response world twin tree list count index store event error status header body data bytes items limit page'.split(' ');

/** Deterministic words and numbers (mulberry32), so every run builds the same repository. */
function generator(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function line(rand: () => number): string {
  const n = 3 + Math.floor(rand() * 9);
  const words: string[] = [];
  for (let i = 0; i < n; i++) words.push(WORDS[Math.floor(rand() * WORDS.length)] as string);
  return '  '.repeat(Math.floor(rand() * 4)) + words.join(' ') + (rand() < 0.3 ? ` ${Math.floor(rand() * 1e6)};` : ';');
}

/** Makes the repository under `dir` and answers the path of the pack its clone received. */
export function makeClonePack(dir: string, options: { files: number; commits: number; seed?: number }): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const src = join(dir, 'src');
  execFileSync('git', ['init', '-q', '--bare', src]);
  const rand = generator(options.seed ?? 7);
  const contents: string[][] = [];
  for (let f = 0; f < options.files; f++) {
    const lines: string[] = [];
    const n = 20 + Math.floor(rand() * 200);
    for (let i = 0; i < n; i++) lines.push(line(rand));
    contents.push(lines);
  }
  const chunks: string[] = [];
  const blob = (text: string): string => `data ${Buffer.byteLength(text)}\n${text}\n`;
  for (let c = 0; c < options.commits; c++) {
    const when = 1_700_000_000 + c * 600;
    const message = `change ${c}: ${line(rand)}`;
    chunks.push(`commit refs/heads/main\ncommitter Bench <bench@example.com> ${when} +0000\n${blob(message)}`);
    if (c === 0) {
      contents.forEach((lines, f) => chunks.push(`M 100644 inline src/m${f % 40}/file${f}.ts\n${blob(lines.join('\n') + '\n')}`));
    } else {
      const edits = 1 + Math.floor(rand() * 4);
      for (let e = 0; e < edits; e++) {
        const f = Math.floor(rand() * contents.length);
        const lines = contents[f] as string[];
        for (let k = 0; k < 3; k++) lines[Math.floor(rand() * lines.length)] = line(rand);
        if (rand() < 0.3) lines.push(line(rand));
        chunks.push(`M 100644 inline src/m${f % 40}/file${f}.ts\n${blob(lines.join('\n') + '\n')}`);
      }
    }
    chunks.push('\n');
  }
  const stream = join(dir, 'import.txt');
  writeFileSync(stream, chunks.join(''));
  execFileSync('git', ['-C', src, 'fast-import', '--quiet'], { input: readFileSync(stream) });
  execFileSync('git', ['-C', src, 'gc', '-q']);
  const clone = join(dir, 'clone.git');
  execFileSync('git', ['clone', '-q', '--bare', '--no-local', src, clone]);
  const packs = readdirSync(join(clone, 'objects', 'pack')).filter((n) => n.endsWith('.pack'));
  if (packs.length !== 1) throw new Error(`expected one pack in the clone, found ${packs.length}`);
  return join(clone, 'objects', 'pack', packs[0] as string);
}
