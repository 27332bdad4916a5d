/** Pieces the mirror's views share, drawn as GitHub draws them: avatars, labels, states, dates, the pager, Markdown. */
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorNote, instant, Loading } from '../../../pages/ui/index.js';
import type { Pages } from './github.js';
import { IssueClosedIcon, IssueNotPlannedIcon, IssueOpenIcon, MergedIcon, PullClosedIcon, PullDraftIcon, PullOpenIcon } from './icons.js';
import { parseMarkdown, type Block, type Inline } from './markdown.js';
import { GhLink } from './nav.js';
import type { Issue, Label, Pull, User } from './types.js';

/** A person's picture: GitHub's avatars are on another host, so a circle with the login's initial, coloured by the login. */
export function Avatar({ login, size = 20 }: { login: string | null | undefined; size?: number }) {
  const name = login ?? 'ghost';
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) | 0;
  const hue = Math.abs(hash) % 360;
  return (
    <span class="avatar" style={{ width: `${size}px`, height: `${size}px`, fontSize: `${Math.round(size * 0.55)}px`, background: `hsl(${hue} 55% 45%)` }} aria-hidden="true">
      {name.charAt(0).toUpperCase()}
    </span>
  );
}

export function Login({ user }: { user: User | null | undefined }) {
  const login = user?.login ?? 'ghost';
  return (
    <GhLink class="login" to={{ kind: 'owner', owner: login, org: user?.type === 'Organization', page: 1 }}>
      {login}
    </GhLink>
  );
}

/** A label as GitHub colours it: its colour behind, black or white text, whichever reads. */
export function LabelPill({ label }: { label: Label }) {
  const hex = /^[0-9a-f]{6}$/i.test(label.color) ? label.color : 'ededed';
  const [r, g, b] = [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
  const light = (r * 299 + g * 587 + b * 114) / 1000 > 150;
  return (
    <span class="label" title={label.description ?? undefined} style={{ background: `#${hex}`, color: light ? '#1f2328' : '#ffffff' }}>
      {label.name}
    </span>
  );
}

/** The coloured state badge at the top of an issue or a pull request. */
export function StateBadge({ issue, pull }: { issue?: Issue; pull?: Pull }) {
  if (pull !== undefined) {
    if (pull.merged_at !== null) return <span class="state state-merged"><MergedIcon /> Merged</span>;
    if (pull.state === 'closed') return <span class="state state-closed"><PullClosedIcon /> Closed</span>;
    if (pull.draft === true) return <span class="state state-draft"><PullDraftIcon /> Draft</span>;
    return <span class="state state-open"><PullOpenIcon /> Open</span>;
  }
  if (issue === undefined) return null;
  if (issue.state === 'open') return <span class="state state-open"><IssueOpenIcon /> Open</span>;
  if (issue.state_reason === 'not_planned') return <span class="state state-closed-gray"><IssueNotPlannedIcon /> Closed</span>;
  return <span class="state state-done"><IssueClosedIcon /> Closed</span>;
}

/** The icon in front of an issue or pull request in a list. */
export function ItemIcon({ issue }: { issue: Issue }) {
  if (issue.pull_request !== undefined) {
    if (issue.pull_request.merged_at !== null) return <MergedIcon />;
    if (issue.state === 'closed') return <PullClosedIcon />;
    return issue.draft === true ? <PullDraftIcon /> : <PullOpenIcon />;
  }
  if (issue.state === 'open') return <IssueOpenIcon />;
  return issue.state_reason === 'not_planned' ? <IssueNotPlannedIcon /> : <IssueClosedIcon />;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * A date as GitHub words it in lists (`on Mar 1, 2026`), with the instant to the second on hover.
 * Not relative: the world's clock is not the browser's.
 */
export function When({ at, prefix = 'on ' }: { at: string | null | undefined; prefix?: string }) {
  if (at === null || at === undefined) return null;
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return <span>{at}</span>;
  return (
    <time dateTime={at} title={instant(at)}>
      {prefix}
      {MONTHS[d.getUTCMonth()]} {d.getUTCDate()}, {d.getUTCFullYear()}
    </time>
  );
}

/** A rounded box with an optional header row, GitHub's `Box`. */
export function Box({ header, children, class: className }: { header?: ComponentChildren; children?: ComponentChildren; class?: string }) {
  return (
    <div class={`box ${className ?? ''}`}>
      {header !== undefined && <div class="box-header">{header}</div>}
      {children}
    </div>
  );
}

/** GitHub's empty state: a centred heading and a line. */
export function Blank({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="blank">
      <h3>{title}</h3>
      {children !== undefined && <p>{children}</p>}
    </div>
  );
}

/** What a view shows while its data comes, or when it could not. */
export function Pending({ error, what }: { error: unknown; what: string }) {
  if (error !== null && error !== undefined) return <ErrorNote error={error} what={`Could not load ${what}`} />;
  return <Loading what={what} />;
}

/**
 * GitHub's pager under a list: Previous, the pages around this one, Next. The numbers come
 * from the `Link` header (`last` when the twin knows it); `href(page)` is the view at that page.
 */
export function Pager({ page, pages, href }: { page: number; pages: Pages; href: (page: number) => string }) {
  const last = pages.last ?? (pages.next !== null ? null : page);
  if (page === 1 && pages.next === null) return null;
  const numbers: (number | '…')[] = [];
  const top = last ?? page + 1;
  for (let n = 1; n <= top; n++) {
    if (n === 1 || n === top || Math.abs(n - page) <= 2) numbers.push(n);
    else if (numbers[numbers.length - 1] !== '…') numbers.push('…');
  }
  return (
    <nav class="gh-pager" aria-label="Pages">
      {page > 1 ? <GhLink to={href(page - 1)}>‹ Previous</GhLink> : <span class="disabled">‹ Previous</span>}
      {numbers.map((n, i) =>
        n === '…' ? (
          <span key={`gap${i}`} class="gap">
            …
          </span>
        ) : n === page ? (
          <em key={n} aria-current="page">
            {n}
          </em>
        ) : (
          <GhLink key={n} to={href(n)}>
            {String(n)}
          </GhLink>
        ),
      )}
      {pages.next !== null ? <GhLink to={href(pages.next)}>Next ›</GhLink> : <span class="disabled">Next ›</span>}
    </nav>
  );
}

function renderInline(nodes: Inline[]): (JSX.Element | string)[] {
  return nodes.map((n, i) => {
    switch (n.t) {
      case 'text':
        return n.text;
      case 'code':
        return <code key={i}>{n.text}</code>;
      case 'strong':
        return <strong key={i}>{renderInline(n.children)}</strong>;
      case 'em':
        return <em key={i}>{renderInline(n.children)}</em>;
      case 'del':
        return <del key={i}>{renderInline(n.children)}</del>;
      case 'link':
        return (
          <a key={i} href={n.href} target="_blank" rel="noopener noreferrer nofollow">
            {renderInline(n.children)}
          </a>
        );
    }
  });
}

function renderBlocks(blocks: Block[]): JSX.Element[] {
  return blocks.map((b, i) => {
    switch (b.t) {
      case 'heading': {
        const H = `h${b.level}` as 'h1';
        return <H key={i}>{renderInline(b.children)}</H>;
      }
      case 'para':
        return <p key={i}>{renderInline(b.children)}</p>;
      case 'code':
        return (
          <pre key={i}>
            <code>{b.text}</code>
          </pre>
        );
      case 'quote':
        return <blockquote key={i}>{renderBlocks(b.children)}</blockquote>;
      case 'rule':
        return <hr key={i} />;
      case 'list': {
        const items = b.items.map((item, j) => (
          <li key={j} class={item.task === null ? undefined : 'task'}>
            {item.task !== null && <input type="checkbox" checked={item.task} disabled />}
            {/* A one-paragraph item is tight, as GitHub draws it: the text beside its box or number. */}
            {item.children.length === 1 && item.children[0]?.t === 'para' ? renderInline(item.children[0].children) : renderBlocks(item.children)}
          </li>
        ));
        return b.ordered ? (
          <ol key={i} start={b.start}>
            {items}
          </ol>
        ) : (
          <ul key={i}>{items}</ul>
        );
      }
    }
  });
}

/** Markdown as GitHub renders it (the subset markdown.ts reads); `empty` when there is no text. */
export function Markdown({ text, empty }: { text: string | null | undefined; empty?: string }) {
  if (text === null || text === undefined || text.trim() === '') return empty === undefined ? null : <p class="muted-text">{empty}</p>;
  return <div class="markdown">{renderBlocks(parseMarkdown(text))}</div>;
}

/** A count in a grey bubble, as beside a tab's name. */
export function Counter({ n }: { n: number | null | undefined }) {
  if (n === null || n === undefined) return null;
  return <span class="counter">{n.toLocaleString('en-US')}</span>;
}

/** A commit id as GitHub shortens it. */
export function short(sha: string): string {
  return sha.slice(0, 7);
}

/** Bytes as GitHub's file header says them (`1.2 KB`). */
export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} Bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 2 : 1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(2)} MB`;
}

/**
 * Long lists drawn in steps: the first `first` items at once, then `chunk` more after each
 * frame is painted, so the first rows of a folder of 1,000 entries (or a file of 5,000 lines)
 * show before the rest is built.
 */
export function useProgressive<T>(items: T[], first = 100, chunk = 400): T[] {
  const [shown, setShown] = useState(Math.min(first, items.length));
  useEffect(() => {
    if (shown >= items.length) return undefined;
    let timer: number | undefined;
    // After the next paint (a frame, then a task), not before it.
    const frame = requestAnimationFrame(() => {
      timer = window.setTimeout(() => setShown((n) => Math.min(items.length, n + chunk)), 0);
    });
    return () => {
      cancelAnimationFrame(frame);
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [shown, items.length, chunk]);
  return shown >= items.length ? items : items.slice(0, shown);
}
