/**
 * This world's branches: other worlds cloned from its history at an instant. Make one (a label,
 * how long it lives, the instant), open it at its own address, remove it. A branch's tokens are
 * shown once, when it is made.
 */
import { useState } from 'preact/hooks';
import { Card, DataTable, ErrorNote, Loading, minute, SecretField, useAction, useLoad } from '../ui/index.js';
import type { Branch, BranchMade } from '../ui/index.js';
import type { SectionProps } from './api.js';
import { ConfirmButton } from './confirm.js';
import { worldOrigin } from './origin.js';

const LIFETIMES: { label: string; seconds: number | null }[] = [
  { label: 'until removed', seconds: null },
  { label: '1 hour', seconds: 3600 },
  { label: '1 day', seconds: 86_400 },
  { label: '7 days', seconds: 7 * 86_400 },
  { label: '30 days', seconds: 30 * 86_400 },
];

function OpenLink({ config, name }: { config: SectionProps['config']; name: string }) {
  const origin = worldOrigin(config.origin, name);
  if (origin === null) return <span class="muted">no address of its own</span>;
  return (
    <a href={`${origin}/`} target="_blank" rel="noopener" aria-label={`Open ${name}`}>
      Open ↗
    </a>
  );
}

function MadeBranch({ made, config, onHide }: { made: BranchMade; config: SectionProps['config']; onHide: () => void }) {
  return (
    <section class="reveal" aria-label="New branch">
      <h3>
        Made <span class="mono">{made.name}</span> <OpenLink config={config} name={made.name} />
      </h3>
      <p>
        Its tokens are shown once: copy them now if an app will use the branch.
        {config.loopback ? ' Its page opens without them on this machine.' : ' Its page asks for one of them (or a read key of the branch).'}
      </p>
      <SecretField label="Token (opens everything)" value={made.token} />
      <SecretField label="Read token (reads only)" value={made.readToken} />
      <button type="button" onClick={onHide}>
        Hide the tokens
      </button>
    </section>
  );
}

function BranchForm({ api, onMade }: SectionProps & { onMade: (made: BranchMade) => void }) {
  const [label, setLabel] = useState('');
  const [ttl, setTtl] = useState<string>('');
  const [at, setAt] = useState('');
  const action = useAction();
  const { busy, error } = action;
  const submit = async (e: Event) => {
    e.preventDefault();
    await action.run(async () => {
      const input: { label?: string; ttl?: number; at?: string } = {};
      if (label.trim() !== '') input.label = label.trim();
      if (ttl !== '') input.ttl = Number(ttl);
      if (at.trim() !== '') input.at = at.trim();
      onMade(await api.makeBranch(input));
      setLabel('');
    });
  };
  return (
    <form class="inline" aria-label="Make a branch" onSubmit={(e) => void submit(e)}>
      <label>
        Label <input name="label" class="mono" placeholder="checkout-test" value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
      </label>
      <label>
        Lives{' '}
        <select name="ttl" value={ttl} onChange={(e) => setTtl(e.currentTarget.value)}>
          {LIFETIMES.map((l) => (
            <option key={l.label} value={l.seconds === null ? '' : String(l.seconds)}>
              {l.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        As of <input name="at" class="mono" placeholder="now, or 2026-05-01T09:00:00Z" value={at} onInput={(e) => setAt(e.currentTarget.value)} />
      </label>
      <button type="submit" class="primary" disabled={busy}>
        Make branch
      </button>
      <ErrorNote error={error} what="The branch was not made" />
    </form>
  );
}

export function BranchesSection(props: SectionProps) {
  const { api, config, writes } = props;
  const branches = useLoad(() => api.branches(), [api]);
  const [made, setMade] = useState<BranchMade | null>(null);
  return (
    <>
      {made !== null && <MadeBranch made={made} config={config} onHide={() => setMade(null)} />}
      <Card title="Branches" actions={<button type="button" onClick={branches.reload}>Refresh</button>}>
        <p class="hint">A branch is another world cloned from this one's history at an instant, its clock set there. What happens in it stays in it.</p>
        {writes && (
          <BranchForm
            {...props}
            onMade={(m) => {
              setMade(m);
              branches.reload();
            }}
          />
        )}
        <ErrorNote error={branches.error} what="The branches could not be read" />
        {branches.data === null ? (
          branches.error === null && <Loading what="the branches" />
        ) : (
          <DataTable<Branch>
            label="Branches"
            rows={branches.data}
            rowKey={(b) => b.name}
            empty="No branches yet."
            columns={[
              { title: 'Branch', mono: true, cell: (b) => b.name },
              { title: 'As of', nowrap: true, cell: (b) => minute(b.at) },
              { title: 'Made', nowrap: true, cell: (b) => minute(b.createdAt) },
              { title: 'Removed', nowrap: true, cell: (b) => (b.expiresAt === null ? <span class="muted">when removed</span> : minute(b.expiresAt)) },
              { title: 'Open', nowrap: true, cell: (b) => <OpenLink config={config} name={b.name} /> },
              ...(writes
                ? [
                    {
                      title: 'Remove',
                      cell: (b: Branch) => (
                        <ConfirmButton
                          label="Remove"
                          confirm="Yes, remove"
                          question={`Remove ${b.name} and everything in it?`}
                          what="The branch was not removed"
                          onConfirm={async () => {
                            await api.removeBranch(b.name);
                            branches.reload();
                          }}
                        />
                      ),
                    },
                  ]
                : []),
            ]}
          />
        )}
      </Card>
    </>
  );
}
