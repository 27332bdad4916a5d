/**
 * Small 16×16 icons in the places GitHub puts its own (drawn here from plain shapes: nothing is
 * loaded from elsewhere). Colour comes from CSS (`currentColor`) unless an icon has its own.
 */
import type { JSX } from 'preact';

function Svg({ children, class: className, label }: { children: JSX.Element | JSX.Element[]; class?: string; label?: string }) {
  return (
    <svg class={`icon ${className ?? ''}`} width="16" height="16" viewBox="0 0 16 16" aria-hidden={label === undefined ? 'true' : undefined} role={label === undefined ? undefined : 'img'} aria-label={label}>
      {children}
    </svg>
  );
}

const stroke = { fill: 'none', stroke: 'currentColor', 'stroke-width': 1.5, 'stroke-linecap': 'round', 'stroke-linejoin': 'round' } as const;

export const RepoIcon = () => (
  <Svg class="muted">
    <path {...stroke} d="M3.5 13.5V3a1.5 1.5 0 0 1 1.5-1.5h8v10H5a1.5 1.5 0 0 0-1.5 1.5 1.5 1.5 0 0 0 1.5 1.5h2" />
    <path {...stroke} d="M9 13.5v2l1-.75 1 .75v-2" />
  </Svg>
);

export const FolderIcon = () => (
  <Svg class="folder">
    <path fill="currentColor" d="M1 3.5A1.5 1.5 0 0 1 2.5 2h3.4l1.6 1.6h6A1.5 1.5 0 0 1 15 5.1v7.4a1.5 1.5 0 0 1-1.5 1.5h-11A1.5 1.5 0 0 1 1 12.5z" />
  </Svg>
);

export const FileIcon = () => (
  <Svg class="muted">
    <path {...stroke} d="M3.5 1.5h5.5l3.5 3.5v9.5h-9z" />
    <path {...stroke} d="M9 1.5V5h3.5" />
  </Svg>
);

export const IssueOpenIcon = () => (
  <Svg class="open" label="Open">
    <circle {...stroke} cx="8" cy="8" r="6.5" />
    <circle fill="currentColor" cx="8" cy="8" r="1.5" />
  </Svg>
);

export const IssueClosedIcon = () => (
  <Svg class="done" label="Closed">
    <circle {...stroke} cx="8" cy="8" r="6.5" />
    <path {...stroke} d="M5.5 8.2l1.8 1.8 3.3-3.6" />
  </Svg>
);

export const IssueNotPlannedIcon = () => (
  <Svg class="muted" label="Closed as not planned">
    <circle {...stroke} cx="8" cy="8" r="6.5" />
    <path {...stroke} d="M3.5 12.5l9-9" />
  </Svg>
);

function pullShape(extra: JSX.Element) {
  return [<circle key="a" {...stroke} cx="4" cy="3.5" r="1.75" />, <circle key="b" {...stroke} cx="4" cy="12.5" r="1.75" />, <path key="c" {...stroke} d="M4 5.25v5.5" />, <circle key="d" {...stroke} cx="12" cy="12.5" r="1.75" />, extra];
}

export const PullOpenIcon = () => <Svg class="open" label="Open pull request">{pullShape(<path key="e" {...stroke} d="M12 10.75V6a2 2 0 0 0-2-2H7.5M9 2.5L7.5 4 9 5.5" />)}</Svg>;

export const PullClosedIcon = () => <Svg class="closed" label="Closed pull request">{pullShape(<path key="e" {...stroke} d="M10.5 3l3 3m0-3l-3 3M12 8.5v2.25" />)}</Svg>;

export const PullDraftIcon = () => <Svg class="muted" label="Draft pull request">{pullShape(<path key="e" {...stroke} d="M12 5v.5m0 2.5v.5" />)}</Svg>;

export const MergedIcon = () => (
  <Svg class="done" label="Merged">
    <circle {...stroke} cx="4" cy="3.5" r="1.75" />
    <circle {...stroke} cx="4" cy="12.5" r="1.75" />
    <circle {...stroke} cx="12" cy="8" r="1.75" />
    <path {...stroke} d="M4 5.25v5.5M4.5 5.5c.8 1.6 2.6 2.5 5.75 2.5" />
  </Svg>
);

export const CommitIcon = () => (
  <Svg class="muted">
    <circle {...stroke} cx="8" cy="8" r="2.75" />
    <path {...stroke} d="M1 8h4.25m5.5 0H15" />
  </Svg>
);

export const BranchIcon = () => (
  <Svg class="muted">
    <circle {...stroke} cx="4.5" cy="3" r="1.5" />
    <circle {...stroke} cx="4.5" cy="13" r="1.5" />
    <circle {...stroke} cx="11.5" cy="4.5" r="1.5" />
    <path {...stroke} d="M4.5 4.5v7M11.5 6c0 3-7 2.5-7 5.5" />
  </Svg>
);

export const CommentIcon = () => (
  <Svg class="muted">
    <path {...stroke} d="M2 3a1 1 0 0 1 1-1h10a1 1 0 0 1 1 1v7a1 1 0 0 1-1 1H7l-3 3v-3H3a1 1 0 0 1-1-1z" />
  </Svg>
);

export const CodeIcon = () => (
  <Svg class="muted">
    <path {...stroke} d="M5.5 4L1.5 8l4 4M10.5 4l4 4-4 4" />
  </Svg>
);

export const LockIcon = () => (
  <Svg class="muted">
    <rect {...stroke} x="3" y="7" width="10" height="7.5" rx="1" />
    <path {...stroke} d="M5 7V5a3 3 0 0 1 6 0v2" />
  </Svg>
);

export const HistoryIcon = () => (
  <Svg class="muted">
    <path {...stroke} d="M1.75 8a6.25 6.25 0 1 0 1.9-4.5M1.75 1.75v3h3" />
    <path {...stroke} d="M8 4.5V8l2.5 1.5" />
  </Svg>
);

/** GitHub's cat, as a plain silhouette. */
export const MarkIcon = () => (
  <svg class="mark" width="32" height="32" viewBox="0 0 32 32" aria-hidden="true">
    <circle cx="16" cy="16" r="15" fill="currentColor" />
    <path fill="#24292f" d="M9 24c0-3 1.5-5 3.5-6-1.8-.7-3.5-2.4-3.5-5.5 0-1.3.4-2.5 1.2-3.4-.2-.6-.4-2 .2-3.6 0 0 1.4-.3 4 1.4a12 12 0 0 1 6.2 0c2.6-1.7 4-1.4 4-1.4.6 1.6.4 3 .2 3.6.8.9 1.2 2.1 1.2 3.4 0 3.1-1.7 4.8-3.5 5.5 2 1 3.5 3 3.5 6v4H9z" />
  </svg>
);
