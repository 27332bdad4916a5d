/**
 * A repository's code, as GitHub's Code tab shows it: the branch, the latest commit and the
 * commit count, the folder's entries (one level: the contents API, at most 1,000, which the
 * trees API continues), the README under them; a file with its lines. Also a tree or a blob by id.
 */
import { useState } from 'preact/hooks';
import { decodeContent, repoPath, type GitHub } from '../github.js';
import { BranchIcon, HistoryIcon } from '../icons.js';
import { useLoad } from '../../../../pages/ui/index.js';
import { GhLink } from '../nav.js';
import { Avatar, Blank, Box, Markdown, Pending, When, short, size, useProgressive } from '../parts.js';
import type { View } from '../routes.js';
import type { Branch, Commit, ContentEntry, ContentFile, GitBlob, GitTree } from '../types.js';
import { About, countOf, useRepo } from './frame.js';

type At = { owner: string; repo: string; ref: string | null };

/** The contents API's path of a folder or file. */
function contentsPath(owner: string, repo: string, path: string): string {
  const rest = path.split('/').filter((p) => p !== '').map(encodeURIComponent).join('/');
  return rest === '' ? `${repoPath(owner, repo)}/contents` : `${repoPath(owner, repo)}/contents/${rest}`;
}

/** GitHub's order in a folder: folders first, then files, each by name. */
function ordered(entries: ContentEntry[]): ContentEntry[] {
  const rank = (e: ContentEntry) => (e.type === 'dir' ? 0 : 1);
  return [...entries].sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name, 'en', { sensitivity: 'base' }) || (a.name < b.name ? -1 : 1));
}

const CONTENTS_DIR_LIMIT = 1000;
/** How many lines of a file the page draws; the rest is said, not drawn. */
const FILE_LINES_SHOWN = 5000;

/** The branch picker: the ref shown, and on opening, the branches to switch to (at the same path). */
function BranchPicker({ gh, at, path }: { gh: GitHub; at: At; path: string }) {
  const repo = useRepo();
  const [open, setOpen] = useState(false);
  const name = at.ref ?? repo?.default_branch ?? '…';
  return (
    <details class="picker" onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary class="btn">
        <BranchIcon /> <span class="ref">{name.length > 7 && /^[0-9a-f]{40}$/.test(name) ? short(name) : name}</span> ▾
      </summary>
      {open && <BranchMenu gh={gh} at={at} path={path} current={name} />}
    </details>
  );
}

function BranchMenu({ gh, at, path, current }: { gh: GitHub; at: At; path: string; current: string }) {
  const branches = useLoad(() => gh.get<Branch[]>(`${repoPath(at.owner, at.repo)}/branches`, { per_page: 100 }), [gh, at.owner, at.repo]);
  return (
    <div class="menu" role="menu">
      <div class="menu-title">Switch branches</div>
      {branches.data === null ? (
        <Pending error={branches.error} what="branches" />
      ) : (
        <>
          {branches.data.data.map((b) => (
            <GhLink key={b.name} class={b.name === current ? 'menu-item selected' : 'menu-item'} to={{ kind: 'contents', owner: at.owner, repo: at.repo, path, ref: b.name }}>
              {b.name}
            </GhLink>
          ))}
          <GhLink class="menu-item all" to={{ kind: 'branches', owner: at.owner, repo: at.repo, page: 1 }}>
            View all branches
          </GhLink>
        </>
      )}
    </div>
  );
}

/** The row above a folder or a file: who changed it last, the message, the id, when; and how many commits there are. */
function LatestCommit({ gh, at, path }: { gh: GitHub; at: At; path: string }) {
  const latest = useLoad(
    () => gh.get<Commit[]>(`${repoPath(at.owner, at.repo)}/commits`, { sha: at.ref, path: path === '' ? null : path, per_page: 1 }),
    [gh, at.owner, at.repo, at.ref, path],
  );
  if (latest.data === null) return <div class="latest">{latest.error !== null ? <Pending error={latest.error} what="the latest commit" /> : <span class="muted-text">…</span>}</div>;
  const c = latest.data.data[0];
  if (c === undefined) return <div class="latest muted-text">No commits yet</div>;
  const count = latest.data.pages.last ?? latest.data.data.length;
  const login = c.author?.login ?? null;
  return (
    <div class="latest">
      <Avatar login={login ?? c.commit.author.name} />
      <strong class="who">{login ?? c.commit.author.name}</strong>
      <GhLink class="message" to={{ kind: 'commit', owner: at.owner, repo: at.repo, sha: c.sha, page: 1 }}>
        {c.commit.message.split('\n')[0]}
      </GhLink>
      <span class="spacer" />
      <GhLink class="sha" to={{ kind: 'commit', owner: at.owner, repo: at.repo, sha: c.sha, page: 1 }}>
        {short(c.sha)}
      </GhLink>
      <span class="muted-text">
        <When at={c.commit.committer.date} prefix="· " />
      </span>
      <GhLink class="history" to={{ kind: 'commits', owner: at.owner, repo: at.repo, ref: at.ref, path: path === '' ? null : path, page: 1 }}>
        <HistoryIcon /> <strong>{count.toLocaleString('en-US')}</strong> {count === 1 ? 'Commit' : 'Commits'}
      </GhLink>
    </div>
  );
}

/** owner / repo / a / b: each folder a link, the last part plain. */
function Crumbs({ at, path }: { at: At; path: string }) {
  const parts = path.split('/').filter((p) => p !== '');
  return (
    <h2 class="crumbs">
      <GhLink to={{ kind: 'contents', owner: at.owner, repo: at.repo, path: '', ref: at.ref }}>{at.repo}</GhLink>
      {parts.map((p, i) => (
        <span key={i}>
          <span class="slash">/</span>
          {i === parts.length - 1 ? <strong>{p}</strong> : <GhLink to={{ kind: 'contents', owner: at.owner, repo: at.repo, path: parts.slice(0, i + 1).join('/'), ref: at.ref }}>{p}</GhLink>}
        </span>
      ))}
    </h2>
  );
}

function Readme({ gh, at, entry }: { gh: GitHub; at: At; entry: ContentEntry }) {
  const file = useLoad(() => gh.body<ContentFile>(contentsPath(at.owner, at.repo, entry.path), { ref: at.ref }), [gh, at.owner, at.repo, at.ref, entry.path]);
  const text = file.data?.content === undefined ? null : decodeContent(file.data.content).text;
  return (
    <Box class="readme" header={<strong>{entry.name}</strong>}>
      {file.data === null ? <Pending error={file.error} what={entry.name} /> : text === null ? <p class="muted-text">Binary file</p> : /\.(md|markdown)$/i.test(entry.name) ? <Markdown text={text} /> : <pre class="plain">{text}</pre>}
    </Box>
  );
}

function Folder({ gh, at, path, entries }: { gh: GitHub; at: At; path: string; entries: ContentEntry[] }) {
  const [all] = useState(() => ordered(entries));
  const rows = useProgressive(all);
  const parent = path.split('/').slice(0, -1).join('/');
  const readme = all.find((e) => e.type === 'file' && /^readme(\.|$)/i.test(e.name));
  return (
    <>
      <Box class="files" header={<LatestCommit gh={gh} at={at} path={path} />}>
        <table class="file-table" aria-label="Files">
          <tbody>
            {path !== '' && (
              <tr class="file-row">
                <td colSpan={2}>
                  <GhLink to={{ kind: 'contents', owner: at.owner, repo: at.repo, path: parent, ref: at.ref }} title="Up to the parent folder">
                    ..
                  </GhLink>
                </td>
              </tr>
            )}
            {rows.map((e) => (
              <tr key={e.path} class="file-row">
                <td class="name">
                  <span class={e.type === 'dir' ? 'fi fi-dir' : 'fi fi-file'} />
                  <GhLink to={{ kind: 'contents', owner: at.owner, repo: at.repo, path: e.path, ref: at.ref }}>{e.name}</GhLink>
                  {e.type === 'submodule' && <span class="muted-text"> (submodule)</span>}
                  {e.type === 'symlink' && <span class="muted-text"> (symlink)</span>}
                </td>
                <td class="size muted-text">{e.type === 'file' ? size(e.size) : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {entries.length >= CONTENTS_DIR_LIMIT && (
          <p class="note">
            GitHub's contents API lists the first {CONTENTS_DIR_LIMIT.toLocaleString('en-US')} entries of a folder; this folder may have more. <AllEntries gh={gh} at={at} path={path} />
          </p>
        )}
      </Box>
      {readme !== undefined && <Readme gh={gh} at={at} entry={readme} />}
    </>
  );
}

/** The folder's tree id, found level by level through the trees API, then a link to its whole listing there. */
function AllEntries({ gh, at, path }: { gh: GitHub; at: At; path: string }) {
  const repo = useRepo();
  const [state, setState] = useState<{ sha: string } | { error: unknown } | null>(null);
  const find = async () => {
    try {
      const base = repoPath(at.owner, at.repo);
      const ref = at.ref ?? repo?.default_branch ?? 'main';
      // The trees API takes a branch, a tag or a commit id as one path segment; a branch with a slash goes through its commit.
      const root = await gh.body<GitTree>(`${base}/git/trees/${encodeURIComponent(ref)}`).catch(async () => {
        const branch = await gh.body<Branch>(`${base}/branches/${ref.split('/').map(encodeURIComponent).join('/')}`);
        return gh.body<GitTree>(`${base}/git/trees/${branch.commit.sha}`);
      });
      let sha = root.sha;
      for (const part of path.split('/').filter((p) => p !== '')) {
        const tree = await gh.body<GitTree>(`${base}/git/trees/${sha}`);
        const next = tree.tree.find((e) => e.path === part && e.type === 'tree');
        if (next === undefined) throw new Error(`${part} is not a folder here`);
        sha = next.sha;
      }
      setState({ sha });
    } catch (error) {
      setState({ error });
    }
  };
  if (state === null)
    return (
      <button type="button" class="link-button" onClick={find}>
        List them all with the trees API
      </button>
    );
  if ('error' in state) return <Pending error={state.error} what="the folder's tree" />;
  return <GhLink to={{ kind: 'git-tree', owner: at.owner, repo: at.repo, sha: state.sha }}>All entries of this folder (trees API)</GhLink>;
}

/** A file's lines, numbered; Markdown previewed as GitHub does (with Code beside it). */
function FileBody({ name, text, bytes }: { name: string; text: string | null; bytes: number }) {
  const markdown = /\.(md|markdown)$/i.test(name);
  const [mode, setMode] = useState<'preview' | 'code'>(markdown ? 'preview' : 'code');
  if (text === null) {
    return (
      <Box class="file" header={<span class="muted-text">{size(bytes)}</span>}>
        <p class="note">Binary file not shown.</p>
      </Box>
    );
  }
  const lines = text === '' ? [] : text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
  const loc = lines.filter((l) => l.trim() !== '').length;
  const drawn = useProgressive(lines.length > FILE_LINES_SHOWN ? lines.slice(0, FILE_LINES_SHOWN) : lines, 200, 1000);
  return (
    <Box
      class="file"
      header={
      <div class="file-info">
        {markdown && (
          <span class="segmented">
            <button type="button" class={mode === 'preview' ? 'on' : ''} onClick={() => setMode('preview')}>
              Preview
            </button>
            <button type="button" class={mode === 'code' ? 'on' : ''} onClick={() => setMode('code')}>
              Code
            </button>
          </span>
        )}
        <span class="muted-text">
          {lines.length.toLocaleString('en-US')} {lines.length === 1 ? 'line' : 'lines'} ({loc.toLocaleString('en-US')} loc) · {size(bytes)}
        </span>
      </div>
      }
    >
      {mode === 'preview' ? (
        <div class="file-preview">
          <Markdown text={text} />
        </div>
      ) : (
        <>
          <table class="code" aria-label={`Lines of ${name}`}>
            <tbody>
              {drawn.map((l, i) => (
                <tr key={i}>
                  <td class="num" data-line={i + 1} />
                  <td class="line">{l}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {lines.length > FILE_LINES_SHOWN && <p class="note">The first {FILE_LINES_SHOWN.toLocaleString('en-US')} of {lines.length.toLocaleString('en-US')} lines are shown.</p>}
        </>
      )}
    </Box>
  );
}

function File({ gh, at, file }: { gh: GitHub; at: At; file: ContentFile }) {
  const decoded = file.content === undefined ? { text: null, bytes: file.size } : decodeContent(file.content);
  return (
    <>
      <Box class="files" header={<LatestCommit gh={gh} at={at} path={file.path} />} />
      {file.type === 'symlink' ? (
        <Box class="file" header={<span class="file-name">Symbolic link</span>}>
          <pre class="plain">{decoded.text ?? ''}</pre>
        </Box>
      ) : (
        <FileBody name={file.name} text={decoded.text} bytes={decoded.bytes} />
      )}
    </>
  );
}

/** `/repos/o/r`, `…/contents/<path>?ref=`, `…/branches/<name>`: a folder or a file at a ref. */
export function CodeView({ gh, view }: { gh: GitHub; view: Extract<View, { kind: 'repo' | 'contents' }> }) {
  const repo = useRepo();
  const path = view.kind === 'contents' ? view.path : '';
  const at: At = { owner: view.owner, repo: view.repo, ref: view.kind === 'contents' ? view.ref : null };
  const [branchCount, setBranchCount] = useState<number | null>(null);
  const contents = useLoad(() => gh.body<ContentEntry[] | ContentFile>(contentsPath(at.owner, at.repo, path), { ref: at.ref }), [gh, at.owner, at.repo, at.ref, path]);
  useLoad(() => countOf(gh, `${repoPath(at.owner, at.repo)}/branches`).then(setBranchCount), [gh, at.owner, at.repo]);
  const empty = contents.error !== null && (contents.error as { message?: string }).message?.includes('This repository is empty') === true;
  const main = (
    <>
      <div class="code-bar">
        <BranchPicker gh={gh} at={at} path={path} />
        {path === '' ? (
          <GhLink class="plain-link" to={{ kind: 'branches', owner: at.owner, repo: at.repo, page: 1 }}>
            <BranchIcon /> <strong>{branchCount ?? '…'}</strong> {branchCount === 1 ? 'Branch' : 'Branches'}
          </GhLink>
        ) : (
          <Crumbs at={at} path={path} />
        )}
      </div>
      {empty ? (
        <Blank title="This repository is empty.">Push a commit or create a file through the API, and it shows here.</Blank>
      ) : contents.data === null ? (
        <Pending error={contents.error} what={path === '' ? 'the files' : path} />
      ) : Array.isArray(contents.data) ? (
        <Folder gh={gh} at={at} path={path} entries={contents.data} />
      ) : (
        <File gh={gh} at={at} file={contents.data} />
      )}
    </>
  );
  if (path !== '') return <div class="code-view">{main}</div>;
  return (
    <div class="layout-sidebar">
      <div class="main">{main}</div>
      <aside class="sidebar">{repo !== null && <About repo={repo} />}</aside>
    </div>
  );
}

/** `/repos/o/r/git/trees/<sha>`: a tree's entries by id (the trees API, one level). */
export function GitTreeView({ gh, view }: { gh: GitHub; view: Extract<View, { kind: 'git-tree' }> }) {
  const tree = useLoad(() => gh.body<GitTree>(`${repoPath(view.owner, view.repo)}/git/trees/${encodeURIComponent(view.sha)}`), [gh, view.owner, view.repo, view.sha]);
  return (
    <div class="code-view">
      <h2 class="crumbs">
        Tree <code>{short(view.sha)}</code>
      </h2>
      {tree.data === null ? <Pending error={tree.error} what="the tree" /> : <TreeEntries owner={view.owner} repo={view.repo} tree={tree.data} />}
    </div>
  );
}

/** A tree's entries (up to the trees API's 100,000), drawn in steps. */
function TreeEntries({ owner, repo, tree }: { owner: string; repo: string; tree: GitTree }) {
  const rows = useProgressive(tree.tree);
  return (
    <Box class="files" header={<span class="muted-text">{tree.tree.length.toLocaleString('en-US')} entries{tree.truncated ? ' (truncated by the trees API)' : ''}</span>}>
      <table class="file-table" aria-label="Files">
        <tbody>
          {rows.map((e) => (
            <tr key={e.path} class="file-row">
              <td class="name">
                <span class={e.type === 'tree' ? 'fi fi-dir' : 'fi fi-file'} />
                <GhLink to={{ kind: e.type === 'tree' ? 'git-tree' : 'git-blob', owner, repo, sha: e.sha }}>{e.path}</GhLink>
              </td>
              <td class="size muted-text">{e.size === undefined ? '' : size(e.size)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Box>
  );
}

/** `/repos/o/r/git/blobs/<sha>`: a blob's content by id. */
export function GitBlobView({ gh, view }: { gh: GitHub; view: Extract<View, { kind: 'git-blob' }> }) {
  const blob = useLoad(() => gh.body<GitBlob>(`${repoPath(view.owner, view.repo)}/git/blobs/${encodeURIComponent(view.sha)}`), [gh, view.owner, view.repo, view.sha]);
  const decoded = blob.data === null ? null : blob.data.encoding === 'base64' ? decodeContent(blob.data.content) : { text: blob.data.content, bytes: blob.data.size };
  return (
    <div class="code-view">
      <h2 class="crumbs">
        <span class="fi fi-file" /> Blob <code>{short(view.sha)}</code>
      </h2>
      {blob.data === null || decoded === null ? (
        <Pending error={blob.error} what="the blob" />
      ) : (
        <FileBody name="" text={decoded.text} bytes={decoded.bytes} />
      )}
    </div>
  );
}
