/**
 * The world page: a top bar (the world, the session), a side navigation, and one section at a
 * time. The section is the address's fragment (`#keys`), so a reload or a shared link opens it;
 * what follows a `/` in it is a record of the section (`#changesets/cs-1`).
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Layout, SideNav, TopBar } from '../ui/index.js';
import type { NavItem, PageContext } from '../ui/index.js';
import { WorldPageApi } from './api.js';
import { BranchesSection } from './branches.js';
import { ChangesetsSection } from './changesets.js';
import { ChecksSection } from './checks.js';
import { KeysSection } from './keys.js';
import { Overview } from './overview.js';
import { RequestsSection } from './requests.js';
import { ScenariosSection } from './scenarios.js';
import { TimelineSection } from './timeline.js';

type Section = 'overview' | 'timeline' | 'branches' | 'changesets' | 'scenarios' | 'checks' | 'keys' | 'requests';

const SECTIONS: { id: Section; label: string }[] = [
  { id: 'overview', label: 'Overview' },
  { id: 'timeline', label: 'Timeline' },
  { id: 'branches', label: 'Branches' },
  { id: 'changesets', label: 'Changesets' },
  { id: 'scenarios', label: 'Scenarios' },
  { id: 'checks', label: 'Checks' },
  { id: 'keys', label: 'Keys' },
  { id: 'requests', label: 'Requests' },
];

interface Place {
  section: Section;
  /** The record opened in the section (a changeset's name); null: the section's list. */
  record: string | null;
}

function placeOf(hash: string, shown: Section[]): Place {
  const fragment = hash.replace(/^#/, '');
  const slash = fragment.indexOf('/');
  const id = (slash < 0 ? fragment : fragment.slice(0, slash)) as Section;
  if (!shown.includes(id)) return { section: 'overview', record: null };
  let record: string | null = null;
  if (slash >= 0 && slash < fragment.length - 1) {
    try {
      record = decodeURIComponent(fragment.slice(slash + 1));
    } catch {
      record = null;
    }
  }
  return { section: id, record };
}

/** How the session is named where the page says who signs: the world names the signer itself. */
function signerOf(session: PageContext['session']): string {
  return session.local === true ? 'this machine' : session.name ?? session.who ?? 'this session';
}

export function WorldPage({ config, world, session, signOut }: PageContext) {
  const api = useMemo(() => new WorldPageApi(world), [world]);
  // Branches only where the host makes them (the single-world server makes none).
  const shown = SECTIONS.filter((s) => s.id !== 'branches' || config.branches);
  const ids = shown.map((s) => s.id);
  const [place, setPlace] = useState<Place>(() => placeOf(location.hash, ids));
  const { section, record } = place;

  useEffect(() => {
    const onHash = () => setPlace(placeOf(location.hash, ids));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, [ids.join()]);

  const go = (id: string) => {
    history.pushState(null, '', id === 'overview' ? `${location.pathname}${location.search}` : `#${id}`);
    setPlace(placeOf(`#${id}`, ids));
    window.scrollTo(0, 0);
  };

  const items: NavItem[] = shown.map((s) => ({ id: s.id, label: s.label, href: s.id === 'overview' ? location.pathname : `#${s.id}` }));
  const twins: NavItem[] = config.twins.filter((t) => t.mirror).map((t) => ({ id: `mirror:${t.vendor}`, label: t.vendor, href: `${config.worldUrl}/${t.vendor}/mirror/` }));
  const writes = session.scope === 'write';
  const props = { api, config, writes };

  return (
    <>
      <TopBar title="twinkit" world={`${config.org}/${config.world}`} session={session} onSignOut={signOut} />
      <Layout
        nav={
          <SideNav
            label="World"
            current={section}
            onSelect={(id) => {
              // The mirrors are pages of their own: their links are followed.
              if (id.startsWith('mirror:')) location.assign(`${config.worldUrl}/${id.slice('mirror:'.length)}/mirror/`);
              else go(id);
            }}
            groups={twins.length === 0 ? [{ items }] : [{ items }, { title: 'Mirrors', items: twins }]}
          />
        }
      >
        {section === 'overview' && <Overview {...props} onTimeline={() => go('timeline')} />}
        {section === 'timeline' && <TimelineSection {...props} />}
        {section === 'branches' && <BranchesSection {...props} />}
        {section === 'changesets' && <ChangesetsSection {...props} open={record} onOpen={(name) => go(name === null ? 'changesets' : `changesets/${encodeURIComponent(name)}`)} signer={signerOf(session)} />}
        {section === 'scenarios' && <ScenariosSection {...props} />}
        {section === 'checks' && <ChecksSection {...props} />}
        {section === 'keys' && <KeysSection {...props} />}
        {section === 'requests' && <RequestsSection {...props} />}
      </Layout>
    </>
  );
}
