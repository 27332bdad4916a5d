/**
 * The world page: a top bar (the world, the session), a side navigation, and one section at a
 * time. The section is the address's fragment (`#keys`), so a reload or a shared link opens it.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Layout, SideNav, TopBar } from '../ui/index.js';
import type { NavItem, PageContext } from '../ui/index.js';
import { WorldPageApi } from './api.js';
import { BranchesSection } from './branches.js';
import { ChecksSection } from './checks.js';
import { KeysSection } from './keys.js';
import { Overview } from './overview.js';
import { RequestsSection } from './requests.js';
import { ScenariosSection } from './scenarios.js';
import { TimelineSection } from './timeline.js';

type Section = 'overview' | 'timeline' | 'branches' | 'scenarios' | 'checks' | 'keys' | 'requests';

const SECTIONS: { id: Section; label: string }[] = [
  { id: 'overview', label: 'Overview' },
  { id: 'timeline', label: 'Timeline' },
  { id: 'branches', label: 'Branches' },
  { id: 'scenarios', label: 'Scenarios' },
  { id: 'checks', label: 'Checks' },
  { id: 'keys', label: 'Keys' },
  { id: 'requests', label: 'Requests' },
];

function sectionOf(hash: string, shown: Section[]): Section {
  const id = hash.replace(/^#/, '') as Section;
  return shown.includes(id) ? id : 'overview';
}

export function WorldPage({ config, world, session, signOut }: PageContext) {
  const api = useMemo(() => new WorldPageApi(world), [world]);
  // Branches only where the host makes them (the single-world server makes none).
  const shown = SECTIONS.filter((s) => s.id !== 'branches' || config.branches);
  const ids = shown.map((s) => s.id);
  const [section, setSection] = useState<Section>(() => sectionOf(location.hash, ids));

  useEffect(() => {
    const onHash = () => setSection(sectionOf(location.hash, ids));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, [ids.join()]);

  const go = (id: string) => {
    history.pushState(null, '', id === 'overview' ? `${location.pathname}${location.search}` : `#${id}`);
    setSection(sectionOf(`#${id}`, ids));
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
        {section === 'scenarios' && <ScenariosSection {...props} />}
        {section === 'checks' && <ChecksSection {...props} />}
        {section === 'keys' && <KeysSection {...props} />}
        {section === 'requests' && <RequestsSection {...props} />}
      </Layout>
    </>
  );
}
