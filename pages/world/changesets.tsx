/**
 * The world's changesets: reviewed lists of its own vendor-API changes, newest first, with
 * where each stands (deployed, verified, approved); the changes not yet cut, and a form that
 * cuts them into a changeset. One opened (`#changesets/<name>`) is changeset.tsx.
 */
import { useState } from 'preact/hooks';
import { Card, count, DataTable, ErrorNote, Loading, minute, useAction, useLoad } from '../ui/index.js';
import type { Changeset, ChangesetRow } from '../ui/index.js';
import type { SectionProps } from './api.js';
import { ChangesetView, type ChangesetViewProps } from './changeset.js';
import { DeployedBadge, HashChangedBadge, VerifiedBadge } from './changeset-marks.js';

/** What the section is given besides the section props: the changeset open, and how to open one. */
export interface ChangesetsProps extends Omit<ChangesetViewProps, 'name' | 'onBack'> {
  /** The changeset's name open; null: the list. */
  open: string | null;
  onOpen: (name: string | null) => void;
}

/** A changeset name (the world's rule): lower case, digits, `.`, `_`, `-`, up to 64, not starting with a sign. */
export const NAME_PATTERN = '[a-z0-9][a-z0-9._\\-]{0,63}';

function approvalsCell(c: ChangesetRow) {
  const current = c.approvals.filter((a) => a.current).length;
  const earlier = c.approvals.length - current;
  return (
    <>
      {count(current)}
      {earlier > 0 && <span class="muted nowrap"> +{count(earlier)} earlier</span>}
    </>
  );
}

function CutForm({ api, onCut }: SectionProps & { onCut: (made: Changeset) => void }) {
  const [message, setMessage] = useState('');
  const [name, setName] = useState('');
  const action = useAction();
  const { busy, error } = action;
  const submit = async (e: Event) => {
    e.preventDefault();
    await action.run(async () => {
      const made = await api.cut(name.trim() === '' ? { message: message.trim() } : { message: message.trim(), name: name.trim() });
      setMessage('');
      setName('');
      onCut(made);
    });
  };
  return (
    <form class="inline" aria-label="Cut a changeset" onSubmit={(e) => void submit(e)}>
      <label>
        Message <input name="message" class="wide" placeholder="Add the Pro plan" value={message} onInput={(e) => setMessage(e.currentTarget.value)} required />
      </label>
      <label>
        Name{' '}
        <input name="name" class="mono" placeholder="cs-1 when empty" pattern={NAME_PATTERN} title="lower case letters, digits, . _ -; up to 64" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <button type="submit" class="primary" disabled={busy || message.trim() === ''}>
        Cut a changeset
      </button>
      <ErrorNote error={error} what="No changeset was cut" />
    </form>
  );
}

/** The changes not in a changeset yet, per twin; the cut form when there are some and the session writes. */
function Unpushed({ unpushed, ...props }: SectionProps & { unpushed: Record<string, number>; onCut: (made: Changeset) => void }) {
  const twins = Object.entries(unpushed).filter(([, n]) => n > 0);
  const total = twins.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) {
    return (
      <p class="muted" role="status" aria-label="Unpushed changes">
        Every change made through the twins' APIs is in a changeset.
      </p>
    );
  }
  return (
    <div class="unpushed">
      <p role="status" aria-label="Unpushed changes">
        <strong>
          {count(total)} change{total === 1 ? '' : 's'} not in a changeset yet:
        </strong>{' '}
        {twins.map(([twin, n], i) => (
          <span key={twin}>
            {i > 0 && ', '}
            <span class="mono">{twin}</span> {count(n)}
          </span>
        ))}
      </p>
      {props.writes && <CutForm {...props} />}
    </div>
  );
}

export function ChangesetsSection(props: ChangesetsProps) {
  const { open, onOpen } = props;
  if (open !== null) return <ChangesetView key={open} {...props} name={open} onBack={() => onOpen(null)} />;
  return <ChangesetList {...props} />;
}

function ChangesetList(props: ChangesetsProps) {
  const { api, onOpen } = props;
  const list = useLoad(() => api.changesets(), [api]);
  return (
    <Card title="Changesets" actions={<button type="button" onClick={list.reload}>Refresh</button>}>
      <p class="hint">A changeset is a reviewed list of this world's own changes, made through the twins' APIs: cut, verified by the world's checks, approved, then deployed to each twin's root.</p>
      <ErrorNote error={list.error} what="The changesets could not be read" />
      {list.data === null ? (
        list.error === null && <Loading what="the changesets" />
      ) : (
        <>
          <Unpushed {...props} unpushed={list.data.unpushed} onCut={(made) => onOpen(made.name)} />
          <DataTable<ChangesetRow>
            label="Changesets"
            rows={list.data.changesets}
            rowKey={(c) => c.name}
            rowHref={(c) => `#changesets/${encodeURIComponent(c.name)}`}
            onOpen={(c) => onOpen(c.name)}
            empty="No changesets yet."
            columns={[
              { title: 'Name', mono: true, nowrap: true, cell: (c) => c.name },
              {
                title: 'Message',
                cell: (c) => (
                  <>
                    {c.message} <HashChangedBadge changeset={c} />
                  </>
                ),
              },
              { title: 'From', mono: true, cell: (c) => c.from },
              {
                title: 'Cut / landed',
                cell: (c) => (
                  <>
                    <span class="muted">{c.cut || c.landedAt === null ? 'cut' : 'landed'}</span> <span class="nowrap">{minute(c.cut || c.landedAt === null ? c.cutAt : c.landedAt)}</span>
                  </>
                ),
              },
              { title: 'Changes', align: 'right', cell: (c) => count(c.changeCount) },
              { title: 'Deployed', cell: (c) => <DeployedBadge deployed={c.deployed} /> },
              { title: 'Verified', nowrap: true, cell: (c) => <VerifiedBadge changeset={c} /> },
              { title: 'Approvals', align: 'right', cell: approvalsCell },
            ]}
          />
        </>
      )}
    </Card>
  );
}
