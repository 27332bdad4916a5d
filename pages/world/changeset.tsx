/**
 * One changeset opened (`#changesets/<name>`): where it stands, its changes as a diff, its
 * verification, approvals and receipts; and for a write session the buttons that move it on:
 * Verify, Approve (with a note), Deploy (confirmed by typing its name). A read session sees
 * all of it and none of the buttons.
 */
import { useState } from 'preact/hooks';
import { ApiError, Card, DetailList, ErrorNote, Loading, count, instant, minute, useLoad } from '../ui/index.js';
import type { Changeset, Deployed } from '../ui/index.js';
import type { SectionProps } from './api.js';
import { ChangeList } from './changes.js';
import { DeployedBadge, HashChangedBadge, VerifiedBadge } from './changeset-marks.js';
import { DeployDialog } from './deploy.js';
import { ApprovalsView, ReceiptsView, VerificationView } from './review.js';

export interface ChangesetViewProps extends SectionProps {
  name: string;
  onBack: () => void;
  /** How the session's person is named (the world signs approvals as them whatever is sent). */
  signer: string;
}

function base(changeset: Changeset): string {
  const twins = Object.entries(changeset.base);
  return twins.length === 0 ? '' : twins.map(([twin, position]) => `${twin} @ ${position}`).join(', ');
}

function Standing({ changeset }: { changeset: Changeset }) {
  const changed = changeset.contentHash !== changeset.currentHash;
  return (
    <>
      <p class="changeset-message">{changeset.message}</p>
      <p class="row" aria-label="Standing">
        <DeployedBadge deployed={changeset.deployed} />
        <VerifiedBadge changeset={changeset} />
        <HashChangedBadge changeset={changeset} />
      </p>
      {changed && (
        <p class="note" role="note">
          Its body was changed outside the world after it was stored: the hash it has now is not the one stored with it. The world refuses to approve it, and what was verified or approved before belongs to an earlier version.
        </p>
      )}
      <DetailList
        label="Changeset"
        items={[
          { label: 'From', value: changeset.from, mono: true },
          ['Cut', instant(changeset.cutAt)],
          ['Landed here', changeset.cut || changeset.landedAt === null ? 'cut here' : instant(changeset.landedAt)],
          { label: 'Base', value: base(changeset), mono: true },
          ['Changes', count(changeset.changes.length)],
          { label: 'Content hash', value: changeset.contentHash, mono: true },
          ...(changed ? [{ label: 'Current hash', value: changeset.currentHash, mono: true }] : []),
          ['Pushed', changeset.pushed === null ? 'not pushed' : `to ${changeset.pushed.to}, ${minute(changeset.pushed.at)}`],
        ]}
      />
    </>
  );
}

/** The checks each change failed, by the latest verification when it is on the current hash. */
function failingChecks(changeset: Changeset): Map<number, string[]> {
  const out = new Map<number, string[]>();
  const v = changeset.verification;
  if (v === null || !v.current) return out;
  for (const f of v.failures) out.set(f.change, [...(out.get(f.change) ?? []), f.check]);
  return out;
}

/** The last thing a button did, said in a line: a verification's result, a deploy's receipts. */
type Done = { tone: 'ok' | 'bad'; text: string } | null;

function deployedText(d: Deployed): Done {
  // The receipts are every attempt's: what counts is how many changes the root has performed.
  const performed = new Set(d.receipts.filter((r) => r.ok).map((r) => r.change)).size;
  const changes = `${count(performed)} change${performed === 1 ? '' : 's'} performed at the root`;
  if (d.deployed === 'all') return { tone: 'ok', text: `Deployed: ${changes}.` };
  return { tone: 'bad', text: d.deployed === 'partial' ? `Partly deployed: ${changes}.` : 'Nothing deployed.' };
}

export function ChangesetView(props: ChangesetViewProps) {
  const { api, name, writes, signer, onBack } = props;
  const loaded = useLoad(() => api.changeset(name), [api, name]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<Done>(null);
  const [deploying, setDeploying] = useState(false);

  const verify = async () => {
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const v = await api.verify(name);
      setDone(v.pass ? { tone: 'ok', text: v.checks === 0 ? 'Verified: the world has no checks in force, so nothing failed.' : `Verified: ${count(v.checks)} check${v.checks === 1 ? '' : 's'} passed.` } : { tone: 'bad', text: `Verification failed: ${count(v.failures.length)} failing.` });
      loaded.reload();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const back = (
    <>
      <button type="button" onClick={onBack}>
        ← All changesets
      </button>
      <button type="button" onClick={loaded.reload}>
        Refresh
      </button>
    </>
  );
  const changeset = loaded.data;
  if (changeset === null) {
    const missing = loaded.error instanceof ApiError && loaded.error.status === 404;
    return (
      <Card title={`Changeset ${name}`} actions={back}>
        {loaded.error === null ? <Loading what={`changeset ${name}`} /> : <ErrorNote error={loaded.error} what={missing ? 'No such changeset in this world' : 'The changeset could not be read'} />}
      </Card>
    );
  }
  return (
    <>
      <Card title={`Changeset ${name}`} actions={back}>
        <Standing changeset={changeset} />
        {writes && (
          <div class="row changeset-actions">
            <button type="button" disabled={busy} onClick={() => void verify()}>
              Verify
            </button>
            {changeset.deployed !== 'all' && (
              <button type="button" class="danger" disabled={busy} onClick={() => (setDone(null), setDeploying(true))}>
                Deploy…
              </button>
            )}
          </div>
        )}
        <ErrorNote error={error} what="Not verified" />
        {done !== null && (
          <p class={done.tone === 'ok' ? 'saved' : 'error'} role="status">
            {done.text}
          </p>
        )}
      </Card>
      <Card title="Changes">
        <ChangeList changes={changeset.changes} failing={failingChecks(changeset)} />
      </Card>
      <Card title="Verification">
        <VerificationView changeset={changeset} />
      </Card>
      <Card title="Approvals">
        <ApprovalsView api={api} changeset={changeset} writes={writes} signer={signer} onApproved={loaded.reload} />
      </Card>
      <Card title="Receipts">
        <ReceiptsView changeset={changeset} />
      </Card>
      {deploying && (
        <DeployDialog
          api={api}
          changeset={changeset}
          onClose={() => setDeploying(false)}
          onDone={(d) => {
            loaded.reload();
            if (d === null) return;
            setDeploying(false);
            setDone(deployedText(d));
          }}
        />
      )}
    </>
  );
}
