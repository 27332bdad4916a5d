/**
 * The world's checks: JavaScript run over every entry before it is performed. Listed with the
 * name each declares; one opened shows its source to edit; a new one is given a name and its
 * source. The world refuses a file that exports no check, and says why.
 */
import { useState } from 'preact/hooks';
import { bytes, Card, DataTable, ErrorNote, Loading, minute, useAction, useLoad } from '../ui/index.js';
import type { CheckRow } from '../ui/index.js';
import type { SectionProps } from './api.js';
import { ConfirmButton } from './confirm.js';
import { Editor } from './editor.js';

const EXAMPLE = `// A check sees each entry before it is performed; throwing refuses it.
export const check = {
  name: 'no-huge-charges',
  run(entry, tree) {
    for (const w of entry.writes) {
      if (w.type === 'charge' && w.value && w.value.amount > 1_000_000) throw new Error('a charge over 10,000.00');
    }
  },
};
`;

function CheckEditor({ api, name: given, onSaved, onClose }: SectionProps & { name: string | null; onSaved: () => void; onClose: () => void }) {
  const source = useLoad(() => (given === null ? Promise.resolve(EXAMPLE) : api.checkSource(given)), [api, given]);
  const [name, setName] = useState(given ?? '');
  const [text, setText] = useState<string | null>(null);
  const action = useAction();
  const { busy, error } = action;
  const shown = text ?? source.data ?? '';
  const save = async (e: Event) => {
    e.preventDefault();
    await action.run(async () => {
      await api.putCheck(name.trim(), shown);
      onSaved();
    });
  };
  if (source.data === null) return source.error === null ? <Loading what="the check" /> : <ErrorNote error={source.error} what="The check could not be read" />;
  return (
    <form class="check-editor" aria-label={given === null ? 'New check' : `Check ${given}`} onSubmit={(e) => void save(e)}>
      <h3>{given === null ? 'New check' : <span class="mono">{given}</span>}</h3>
      {given === null && (
        <label class="field">
          <span>Name</span>
          <input name="name" class="mono" placeholder="no-huge-charges" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
        </label>
      )}
      <Editor label="Check source" value={shown} onInput={setText} marked={null} rows={14} />
      <ErrorNote error={error} what="The world refused this check" />
      <div class="row">
        <button type="submit" class="primary" disabled={busy || name.trim() === ''}>
          Save check
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </form>
  );
}

export function ChecksSection(props: SectionProps) {
  const { api, writes } = props;
  const checks = useLoad(() => (writes ? api.checks() : Promise.resolve([])), [api, writes]);
  // null: none open; '': a new one.
  const [open, setOpen] = useState<string | null>(null);
  return (
    <Card
      title="Checks"
      actions={
        writes && (
          <button type="button" onClick={() => setOpen('')}>
            New check
          </button>
        )
      }
    >
      <p class="hint">Checks run over every entry before it is performed, in an isolate of their own; a check that throws refuses the entry.</p>
      {!writes ? (
        <p class="muted">A read session cannot see the checks: open the page with the world's token.</p>
      ) : (
        <>
          <ErrorNote error={checks.error} what="The checks could not be read" />
          {checks.data === null ? (
            checks.error === null && <Loading what="the checks" />
          ) : (
            <DataTable<CheckRow>
              label="Checks"
              rows={checks.data}
              rowKey={(c) => c.name}
              selected={open}
              empty="No checks yet."
              columns={[
                {
                  title: 'Name',
                  mono: true,
                  cell: (c) => (
                    <button type="button" class="link" onClick={() => setOpen(c.name)}>
                      {c.name}
                    </button>
                  ),
                },
                { title: 'Declares', mono: true, cell: (c) => c.declared },
                { title: 'Updated', nowrap: true, cell: (c) => minute(c.updatedAt) },
                { title: 'Size', align: 'right', cell: (c) => bytes(c.bytes) },
                {
                  title: 'Remove',
                  cell: (c) => (
                    <ConfirmButton
                      label="Remove"
                      confirm="Yes, remove"
                      question={`Stop running ${c.name}?`}
                      what="The check was not removed"
                      onConfirm={async () => {
                        await api.removeCheck(c.name);
                        if (open === c.name) setOpen(null);
                        checks.reload();
                      }}
                    />
                  ),
                },
              ]}
            />
          )}
          {open !== null && (
            <CheckEditor
              key={open}
              {...props}
              name={open === '' ? null : open}
              onClose={() => setOpen(null)}
              onSaved={() => {
                setOpen(null);
                checks.reload();
              }}
            />
          )}
        </>
      )}
    </Card>
  );
}
