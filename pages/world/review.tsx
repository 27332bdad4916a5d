/**
 * What was done with a changeset: its verifications (the failures by check and change), its
 * approvals (who, their note, whether on the current hash), and the receipts of deploying it
 * (each change's result at the root and the twin's ids mapped to the real ones).
 */
import { useState } from 'preact/hooks';
import { Badge, count, DataTable, ErrorNote, minute, useAction } from '../ui/index.js';
import type { Approval, Changeset, Receipt, Verification } from '../ui/index.js';
import type { WorldPageApi } from './api.js';

function VersionBadge({ current, hash }: { current: boolean; hash: string }) {
  return current ? (
    <Badge tone="green" title={hash}>
      current hash
    </Badge>
  ) : (
    <Badge tone="amber" title={`made on ${hash}`}>
      earlier version
    </Badge>
  );
}

function changeLabel(changeset: Changeset, index: number): string {
  const change = changeset.changes.find((c) => c.index === index);
  return change === undefined ? `#${index + 1}` : `#${index + 1} ${change.request.method} ${change.request.path}`;
}

export function VerificationView({ changeset }: { changeset: Changeset }) {
  const latest = changeset.verification;
  if (latest === null) return <p class="muted">Not verified yet: Verify runs the world's checks over every change.</p>;
  const earlier = changeset.verifications.filter((v) => v !== latest && !(v.at === latest.at && v.hash === latest.hash));
  const failures = latest.failures;
  return (
    <>
      <p class="row" role="status" aria-label="Latest verification">
        <Badge tone={latest.pass ? 'green' : 'red'}>{latest.pass ? 'pass' : 'fail'}</Badge>
        <VersionBadge current={latest.current} hash={latest.hash} />
        <span>
          {latest.checks === 0 ? 'no checks in force' : `${count(latest.checks)} check${latest.checks === 1 ? '' : 's'}`} over {count(latest.changes)} change{latest.changes === 1 ? '' : 's'}, {minute(latest.at)}
          {failures.length > 0 && `; ${count(failures.length)} failed`}
        </span>
      </p>
      {failures.length > 0 && (
        <DataTable<Verification['failures'][number]>
          label="Failures"
          rows={failures}
          rowKey={(r) => `${r.change}/${r.check}`}
          columns={[
            { title: 'Check', mono: true, cell: (r) => r.check },
            { title: 'Change', mono: true, cell: (r) => changeLabel(changeset, r.change) },
            { title: 'Twin', mono: true, cell: (r) => r.twin },
            {
              title: 'Why',
              cell: (r) => (
                <ul class="plain">
                  {r.failures.map((f, i) => (
                    <li key={i}>{f}</li>
                  ))}
                </ul>
              ),
            },
          ]}
        />
      )}
      {earlier.length > 0 && (
        <details class="change-more">
          <summary>
            {earlier.length} earlier verification{earlier.length === 1 ? '' : 's'}
          </summary>
          <DataTable<Verification>
            label="Earlier verifications"
            rows={earlier}
            rowKey={(v) => `${v.at}/${v.hash}`}
            columns={[
              { title: 'When', nowrap: true, cell: (v) => minute(v.at) },
              { title: 'Result', cell: (v) => <Badge tone={v.pass ? 'green' : 'red'}>{v.pass ? 'pass' : 'fail'}</Badge> },
              { title: 'Checks', align: 'right', cell: (v) => count(v.checks) },
              { title: 'Version', cell: (v) => <VersionBadge current={v.current} hash={v.hash} /> },
            ]}
          />
        </details>
      )}
    </>
  );
}

function ApproveForm({ api, changeset, signer, onApproved }: { api: WorldPageApi; changeset: Changeset; signer: string; onApproved: () => void }) {
  const [note, setNote] = useState('');
  const action = useAction();
  const { busy, error } = action;
  const submit = async (e: Event) => {
    e.preventDefault();
    await action.run(async () => {
      // The world signs as this session's person whatever `as` says; it is sent because the body has one.
      await api.approve(changeset.name, note.trim() === '' ? { as: signer } : { as: signer, note: note.trim() });
      setNote('');
      onApproved();
    });
  };
  return (
    <form class="inline" aria-label="Approve" onSubmit={(e) => void submit(e)}>
      <label>
        Note <input name="note" class="wide" placeholder="Looks right to me" value={note} onInput={(e) => setNote(e.currentTarget.value)} />
      </label>
      <button type="submit" class="primary" disabled={busy}>
        Approve
      </button>
      <span class="hint">signed as {signer}</span>
      <ErrorNote error={error} what="Not approved" />
    </form>
  );
}

export function ApprovalsView({ api, changeset, writes, signer, onApproved }: { api: WorldPageApi; changeset: Changeset; writes: boolean; signer: string; onApproved: () => void }) {
  return (
    <>
      <DataTable<Approval>
        label="Approvals"
        rows={changeset.approvals}
        rowKey={(a) => a.signature}
        empty="No approvals yet."
        columns={[
          { title: 'As', cell: (a) => <strong>{a.as}</strong> },
          { title: 'Note', cell: (a) => a.note ?? <span class="muted">—</span> },
          { title: 'When', nowrap: true, cell: (a) => minute(a.at) },
          { title: 'Version', cell: (a) => <VersionBadge current={a.current} hash={a.hash} /> },
          { title: 'Key', mono: true, cell: (a) => a.keyId },
        ]}
      />
      {writes && <ApproveForm api={api} changeset={changeset} signer={signer} onApproved={onApproved} />}
    </>
  );
}

function IdsCell({ ids }: { ids: Record<string, string> }) {
  const pairs = Object.entries(ids);
  if (pairs.length === 0) return <span class="muted">—</span>;
  return (
    <ul class="plain mono">
      {pairs.map(([twin, real]) => (
        <li key={twin}>
          {twin} → {real}
        </li>
      ))}
    </ul>
  );
}

export function ReceiptsView({ changeset }: { changeset: Changeset }) {
  return (
    <DataTable<Receipt>
      label="Receipts"
      rows={changeset.receipts}
      rowKey={(r) => `${r.change}/${r.at}/${r.idempotencyKey}`}
      empty="Nothing deployed yet: a receipt is written for every change deployed (or failing)."
      columns={[
        { title: 'Change', mono: true, nowrap: true, cell: (r) => `#${r.change + 1} ${r.twin}` },
        {
          title: 'Result',
          nowrap: true,
          cell: (r) => (
            <>
              <Badge tone={r.ok ? 'green' : 'red'}>{r.ok ? 'ok' : 'failed'}</Badge> {r.status === null ? <span class="muted">no answer</span> : r.status}
            </>
          ),
        },
        {
          title: 'Sent',
          // Wide enough that a URL breaks into a few lines, not into a column of letters.
          width: '32%',
          cell: (r) => (
            <span class="mono breakable">
              {r.request.method} {r.request.url}
            </span>
          ),
        },
        { title: 'Ids: twin → real', cell: (r) => <IdsCell ids={r.ids} /> },
        { title: 'When', nowrap: true, cell: (r) => minute(r.at) },
        { title: 'Error', cell: (r) => (r.error === null ? <span class="muted">—</span> : <span class="error-text">{r.error}</span>) },
      ]}
    />
  );
}
