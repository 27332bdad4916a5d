/** How a changeset's standing reads, in the list and in one opened: deployed, verified, changed outside. */
import { Badge, minute } from '../ui/index.js';
import type { Changeset, ChangesetRow, Tone } from '../ui/index.js';

const DEPLOYED_TONE: Record<Changeset['deployed'], Tone> = { none: 'gray', partial: 'amber', all: 'green' };

export function DeployedBadge({ deployed }: { deployed: Changeset['deployed'] }) {
  return <Badge tone={DEPLOYED_TONE[deployed]}>{deployed === 'none' ? 'not deployed' : deployed === 'all' ? 'deployed' : 'partly deployed'}</Badge>;
}

/** The latest verification: pass, fail or none; marked when it was made on an earlier version. */
export function VerifiedBadge({ changeset }: { changeset: Changeset | ChangesetRow }) {
  const v = changeset.verification;
  if (v === null) return <Badge>not verified</Badge>;
  return (
    <>
      <Badge tone={v.pass ? 'green' : 'red'} title={`${v.checks} check${v.checks === 1 ? '' : 's'} over ${v.changes} change${v.changes === 1 ? '' : 's'}, ${minute(v.at)}`}>
        {v.pass ? 'pass' : 'fail'}
      </Badge>
      {!v.current && (
        <Badge tone="amber" title={`verified on ${v.hash}, not on the current hash`}>
          earlier version
        </Badge>
      )}
    </>
  );
}

export function HashChangedBadge({ changeset }: { changeset: Changeset | ChangesetRow }) {
  if (changeset.contentHash === changeset.currentHash) return null;
  return (
    <Badge tone="red" title={`stored ${changeset.contentHash}, now ${changeset.currentHash}`}>
      changed outside the world
    </Badge>
  );
}
