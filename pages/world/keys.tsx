/**
 * The world's named keys: made for an app or a person (`tok_k_…`, shown once), listed by name
 * with who made them and when they were last used, revoked one by one. Managed by a write
 * session; a key never manages keys.
 */
import { useState } from 'preact/hooks';
import { Badge, Card, DataTable, ErrorNote, Loading, minute, SecretField, useAction, useLoad } from '../ui/index.js';
import type { NamedKey, NamedKeyMade } from '../ui/index.js';
import type { SectionProps } from './api.js';
import { ConfirmButton } from './confirm.js';

function MadeKey({ made, onHide }: { made: NamedKeyMade; onHide: () => void }) {
  return (
    <section class="reveal" aria-label="New key">
      <h3>
        Key <span class="mono">{made.name}</span> <Badge tone={made.scope === 'write' ? 'blue' : 'gray'}>{made.scope}</Badge>
      </h3>
      <p>This key is shown once. Copy it now: the world keeps only its hash and this page will not show it again.</p>
      <SecretField label="Key" value={made.key} />
      <button type="button" onClick={onHide}>
        I have copied it: hide
      </button>
    </section>
  );
}

function KeyForm({ api, onMade }: SectionProps & { onMade: (made: NamedKeyMade) => void }) {
  const [name, setName] = useState('');
  const [scope, setScope] = useState<'read' | 'write'>('read');
  const action = useAction();
  const { busy, error } = action;
  const submit = async (e: Event) => {
    e.preventDefault();
    await action.run(async () => {
      onMade(await api.makeKey({ name: name.trim(), scope }));
      setName('');
    });
  };
  return (
    <form class="inline" aria-label="Make a key" onSubmit={(e) => void submit(e)}>
      <label>
        Name <input name="name" placeholder="ci, staging app, Ada" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
      </label>
      <label>
        Scope{' '}
        <select name="scope" value={scope} onChange={(e) => setScope(e.currentTarget.value as 'read' | 'write')}>
          <option value="read">read</option>
          <option value="write">write</option>
        </select>
      </label>
      <button type="submit" class="primary" disabled={busy || name.trim() === ''}>
        Make key
      </button>
      <ErrorNote error={error} what="The key was not made" />
    </form>
  );
}

export function KeysSection(props: SectionProps) {
  const { api, writes } = props;
  const keys = useLoad(() => (writes ? api.keys() : Promise.resolve([])), [api, writes]);
  const [made, setMade] = useState<NamedKeyMade | null>(null);
  return (
    <>
      {made !== null && <MadeKey made={made} onHide={() => setMade(null)} />}
      <Card title="Keys" actions={writes && <button type="button" onClick={keys.reload}>Refresh</button>}>
        <p class="hint">A key opens the twins' APIs and this world's endpoints as a token of its scope does, and can be revoked alone. A read key also opens this page, for reading.</p>
        {!writes ? (
          <p class="muted">Keys are managed with write access: a read session cannot see them.</p>
        ) : (
          <>
            <KeyForm
              {...props}
              onMade={(m) => {
                setMade(m);
                keys.reload();
              }}
            />
            <ErrorNote error={keys.error} what="The keys could not be read" />
            {keys.data === null ? (
              keys.error === null && <Loading what="the keys" />
            ) : (
              <DataTable<NamedKey>
                label="Keys"
                rows={keys.data}
                rowKey={(k) => k.id}
                empty="No keys yet."
                columns={[
                  { title: 'Name', cell: (k) => <strong>{k.name}</strong> },
                  { title: 'Scope', cell: (k) => <Badge tone={k.scope === 'write' ? 'blue' : 'gray'}>{k.scope}</Badge> },
                  { title: 'Id', mono: true, cell: (k) => k.id },
                  { title: 'Made', nowrap: true, cell: (k) => minute(k.createdAt) },
                  { title: 'By', cell: (k) => k.createdBy ?? <span class="muted">—</span> },
                  { title: 'For', cell: (k) => k.for ?? <span class="muted">—</span> },
                  { title: 'Last used', nowrap: true, cell: (k) => (k.lastUsedAt === null ? <span class="muted">never</span> : minute(k.lastUsedAt)) },
                  { title: 'Expires', nowrap: true, cell: (k) => (k.expiresAt === null ? <span class="muted">never</span> : minute(k.expiresAt)) },
                  {
                    title: 'Revoke',
                    cell: (k) => (
                      <ConfirmButton
                        label="Revoke"
                        confirm="Yes, revoke"
                        question={`Apps using ${k.name} are refused from their next request.`}
                        what="The key was not revoked"
                        onConfirm={async () => {
                          await api.revokeKey(k.id);
                          setMade((m) => (m?.id === k.id ? null : m));
                          keys.reload();
                        }}
                      />
                    ),
                  },
                ]}
              />
            )}
          </>
        )}
      </Card>
    </>
  );
}
