/**
 * The mirror: GitHub's dark header, then the view the address names. The address is a vendor
 * path under `{worldUrl}/github`; opened at `…/github/mirror/`, the page moves to the home view
 * (`/user/repos`). Inside a repository the frame (name, tabs) stays while its views change.
 */
import { useEffect, useMemo } from 'preact/hooks';
import { JsonView, sessionLabel, useLoad, useLocation, type PageConfig, type SessionInfo } from '../../../pages/ui/index.js';
import { GitHub } from './github.js';
import { MarkIcon } from './icons.js';
import { BaseContext, GhLink, go, useLinkClicks } from './nav.js';
import { Blank, Pending } from './parts.js';
import { HOME_PATH, repoOf, vendorPathOf, viewOf, type View } from './routes.js';
import { CodeView, GitBlobView, GitTreeView } from './views/code.js';
import { BranchesView, CommitsView, CommitView, CompareView } from './views/commits.js';
import { RepoFrame } from './views/frame.js';
import { IssuesView, IssueView, LabelsView } from './views/issues.js';
import { PullsView, PullView } from './views/pulls.js';
import { AllView, HomeView, OwnerView } from './views/repos.js';

function Header({ config, session, signOut }: { config: PageConfig; session: SessionInfo; signOut: () => void }) {
  return (
    <header class="gh-header">
      <GhLink class="gh-mark" to={HOME_PATH} title="Repositories">
        <MarkIcon />
      </GhLink>
      <span class="gh-context">
        <span class="muted-on-dark">
          {config.org}/{config.world}
        </span>
        <span class="gh-sep">/</span>
        <strong>GitHub</strong>
      </span>
      <nav class="gh-nav" aria-label="Mirror">
        <GhLink to={HOME_PATH}>Your repositories</GhLink>
        <GhLink to={{ kind: 'all', after: null }}>All repositories</GhLink>
      </nav>
      <span class="spacer" />
      <span class="gh-badge" title="The mirror reads the twin's API with this browser's session and changes nothing.">
        mirror · {sessionLabel(session)} session
      </span>
      {config.origin !== null && (
        <a class="gh-world" href="/">
          World page
        </a>
      )}
      <button type="button" class="gh-signout" onClick={signOut}>
        Sign out
      </button>
    </header>
  );
}

/** A path the mirror has no view for: the API's own answer there, as JSON. */
function Unknown({ gh, path }: { gh: GitHub; path: string }) {
  const answer = useLoad(() => gh.body<unknown>(path), [gh, path]);
  return (
    <div class="container">
      <Blank title="This mirror has no page for this address">
        <code>{path}</code> is a path of GitHub's API the mirror does not draw; below is what the API answers there. <GhLink to={HOME_PATH}>Go to the repositories</GhLink>.
      </Blank>
      {answer.data === null ? <Pending error={answer.error} what={path} /> : <JsonView value={answer.data} />}
    </div>
  );
}

function Body({ gh, view }: { gh: GitHub; view: View }) {
  switch (view.kind) {
    case 'home':
      return <HomeView gh={gh} view={view} />;
    case 'all':
      return <AllView gh={gh} view={view} />;
    case 'owner':
      return <OwnerView gh={gh} view={view} />;
    case 'repo':
    case 'contents':
      return <CodeView gh={gh} view={view} />;
    case 'git-tree':
      return <GitTreeView gh={gh} view={view} />;
    case 'git-blob':
      return <GitBlobView gh={gh} view={view} />;
    case 'commits':
      return <CommitsView gh={gh} view={view} />;
    case 'commit':
      return <CommitView gh={gh} view={view} />;
    case 'compare':
      return <CompareView gh={gh} view={view} />;
    case 'branches':
      return <BranchesView gh={gh} view={view} />;
    case 'issues':
      return <IssuesView gh={gh} view={view} />;
    case 'issue':
      return <IssueView gh={gh} view={view} />;
    case 'labels':
      return <LabelsView gh={gh} view={view} />;
    case 'pulls':
      return <PullsView gh={gh} view={view} />;
    case 'pull':
      return <PullView gh={gh} view={view} />;
    case 'unknown':
      return <Unknown gh={gh} path={view.path} />;
  }
}

export function Mirror({ config, session, signOut }: { config: PageConfig; session: SessionInfo; signOut: () => void }) {
  const base = `${config.worldUrl}/${config.vendor ?? 'github'}`;
  const gh = useMemo(() => new GitHub(base), [base]);
  const { path: pathname, query } = useLocation();
  const search = query.toString() === '' ? '' : `?${query.toString()}`;
  useLinkClicks(base);
  const path = vendorPathOf(pathname, base);
  useEffect(() => {
    // At the mirror's own address (or one outside it): move to the home view, in place.
    if (path === null) go(base, HOME_PATH, { replace: true });
  }, [path, base]);
  const view = useMemo(() => viewOf(path ?? HOME_PATH, path === null ? '' : search), [path, search]);
  useEffect(() => {
    const r = repoOf(view);
    document.title = `${r === null ? 'GitHub' : `${r.owner}/${r.repo}`} · ${config.org}/${config.world} mirror`;
  }, [view]);
  const r = repoOf(view);
  // Each address gets its view afresh (keyed), so a view never shows another's data while loading.
  const body = <Body key={`${pathname}${search}`} gh={gh} view={view} />;
  return (
    <BaseContext.Provider value={base}>
      <div class="gh">
      <Header config={config} session={session} signOut={signOut} />
      <main class="gh-main">
        {r === null ? (
          body
        ) : (
          <RepoFrame key={`${r.owner}/${r.repo}`.toLowerCase()} gh={gh} owner={r.owner} repo={r.repo} view={view}>
            {body}
          </RepoFrame>
        )}
      </main>
      </div>
    </BaseContext.Provider>
  );
}
