/**
 * What a person sees first: the world's twins (each with its vendor API address and its mirror),
 * the clock, and the latest of the timeline, kept live.
 */
import { useState } from 'preact/hooks';
import { Card, ClockControls, DataTable, Empty, ErrorNote, Loading, TimelineTable, count, useInterval, useLoad } from '../ui/index.js';
import type { Clock, TwinStatus } from '../ui/index.js';
import type { SectionProps } from './api.js';

/** How often the latest entries are asked for again. */
const POLL_MS = 3000;

function resources(twin: TwinStatus): string {
  const plain = (twin.resources ?? []).filter((r) => !r.type.includes('.') && !r.type.startsWith('scenario'));
  if (plain.length === 0) return 'none yet';
  return plain
    .slice()
    .sort((a, b) => b.count - a.count || a.type.localeCompare(b.type))
    .slice(0, 4)
    .map((r) => `${r.type} ${count(r.count)}`)
    .join(' · ');
}

/** The twin's name, where its code comes from, and a failed build (the last good one still serves). */
function TwinName({ twin }: { twin: TwinStatus }) {
  const source = twin.source;
  const failed = source?.build?.ok === false ? source.build.error : undefined;
  return (
    <>
      <strong class="mono">{twin.vendor}</strong>
      {source?.path !== undefined && <div class="muted mono">{source.path}</div>}
      {failed !== undefined && (
        <p class="error" role="alert" data-build-error={twin.vendor}>
          <strong>Does not build: </strong>
          {failed.file !== undefined && <span class="mono">{`${failed.file}${failed.line !== undefined ? `:${failed.line}:${failed.column ?? 1}` : ''} `}</span>}
          {failed.message} <span class="muted">(the last good build is serving)</span>
        </p>
      )}
    </>
  );
}

/** The scenario in force, and a refused edit of its file. */
function ScenarioCell({ twin }: { twin: TwinStatus }) {
  const problem = twin.scenarioFile?.problem ?? null;
  return (
    <>
      {twin.scenario === null ? <span class="muted">none</span> : `${twin.scenario.handlers} handlers`}
      {twin.scenarioFile !== undefined && <div class="muted mono">{twin.scenarioFile.path}</div>}
      {problem !== null && (
        <p class="error" role="alert">
          <span class="mono">{`${twin.scenarioFile!.path}${problem.line !== undefined ? `:${problem.line}` : ''} `}</span>
          {problem.message} <span class="muted">(not in force)</span>
        </p>
      )}
    </>
  );
}

function Twins({ api, config }: SectionProps) {
  const twins = useLoad(() => api.twins(), [api]);
  const mirrorOf = new Map(config.twins.map((t) => [t.vendor, t.mirror]));
  // Where an app reaches the twins: the host's own address (the world's origin is for browsers).
  const base = `${config.base ?? location.origin}${config.worldUrl}`;
  return (
    <Card title="Twins" actions={<button type="button" onClick={twins.reload}>Refresh</button>}>
      <ErrorNote error={twins.error} what="The twins could not be read" />
      {twins.data === null ? (
        twins.error === null && <Loading what="the twins" />
      ) : (
        <DataTable<TwinStatus>
          label="Twins"
          rows={twins.data}
          rowKey={(t) => t.vendor}
          empty="This world has no twins."
          columns={[
            { title: 'Twin', cell: (t) => <TwinName twin={t} /> },
            { title: 'Vendor API', mono: true, cell: (t) => `${base}/${t.vendor}/` },
            { title: 'Position', align: 'right', cell: (t) => count(t.position) },
            { title: 'Records', cell: (t) => <span class="muted">{resources(t)}</span> },
            { title: 'Scenario', cell: (t) => <ScenarioCell twin={t} /> },
            {
              title: 'Mirror',
              nowrap: true,
              cell: (t) =>
                mirrorOf.get(t.vendor) === true ? (
                  <a class="button-link" href={`${config.worldUrl}/${t.vendor}/mirror/`}>
                    Open mirror
                  </a>
                ) : (
                  <span class="muted">no mirror</span>
                ),
            },
          ]}
        />
      )}
    </Card>
  );
}

function ClockCard({ api, writes, onChanged }: SectionProps & { onChanged: () => void }) {
  const clock = useLoad(() => api.clock(), [api]);
  return (
    <Card title="Clock">
      <ErrorNote error={clock.error} what="The clock could not be read" />
      <ClockControls
        clock={clock.data}
        readOnly={!writes}
        onSet={(at) => api.setClock(at)}
        onAdvance={(by) => api.advanceClock(by)}
        onChanged={(c: Clock) => {
          clock.set(c);
          onChanged();
        }}
      />
    </Card>
  );
}

function Latest({ api, onTimeline, moved }: SectionProps & { onTimeline: () => void; moved: number }) {
  const latest = useLoad(() => api.timeline({}, null, 10), [api, moved]);
  useInterval(latest.reload, POLL_MS);
  return (
    <Card
      title="Latest"
      actions={
        <button type="button" onClick={onTimeline}>
          Whole timeline
        </button>
      }
    >
      {latest.data === null ? (
        latest.error === null ? <Loading what="the timeline" /> : <ErrorNote error={latest.error} what="The timeline could not be read" />
      ) : latest.data.entries.length === 0 ? (
        <Empty title="Nothing has happened in this world yet." hint="Requests your app sends to the twins appear here as they happen." />
      ) : (
        <>
          <ErrorNote error={latest.error} what="The timeline could not be read again" />
          <TimelineTable items={latest.data.entries} />
        </>
      )}
    </Card>
  );
}

export function Overview(props: SectionProps & { onTimeline: () => void }) {
  // A clock move may make timed moves fall due: the latest entries are read again after one.
  const [moved, setMoved] = useState(0);
  return (
    <>
      <h1 class="page-title">
        {props.config.org}/{props.config.world}
      </h1>
      <Twins {...props} />
      <ClockCard {...props} onChanged={() => setMoved((n) => n + 1)} />
      <Latest {...props} moved={moved} />
    </>
  );
}
