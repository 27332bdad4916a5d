/**
 * Each twin's scenario: the handlers document in force (YAML or JSON), edited here and put in
 * force on Save (live on the twin's next request), or removed. A document the world refuses
 * stays in the editor with the line it names marked and the world's words beside it; the one
 * in force does not change.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, Badge, Card, ErrorNote, Loading, Tabs, minute } from '../ui/index.js';
import { formatOf, type SectionProps } from './api.js';
import { ConfirmButton } from './confirm.js';
import { Editor, type Marked } from './editor.js';
import { locateProblem } from './locate.js';

/** A start for a twin with no scenario: one handler, as the docs write them. */
const EXAMPLE = `# An example: change the paths to this twin's. Handlers are tried in order; the first
# whose match fits the request answers, the others leave the request to the twin.
handlers:
  - name: slow-customers
    match: GET /v1/customers
    delay: 2s
  - name: card-declined
    match: POST /v1/charges
    times: 1
    respond:
      status: 402
      body: { error: { type: card_error, code: card_declined, message: Your card was declined. } }
`;

type Loaded = { kind: 'loading' } | { kind: 'none' } | { kind: 'document'; source: string } | { kind: 'failed'; error: unknown };

function TwinScenario({ api, vendor, writes }: SectionProps & { vendor: string }) {
  const [loaded, setLoaded] = useState<Loaded>({ kind: 'loading' });
  const [text, setText] = useState('');
  const [format, setFormat] = useState<'yaml' | 'json'>('yaml');
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<unknown>(null);
  const [marked, setMarked] = useState<Marked | null>(null);
  const [saved, setSaved] = useState<string | null>(null);

  const load = () => {
    setLoaded({ kind: 'loading' });
    api.scenario(vendor).then(
      (doc) => {
        setLoaded({ kind: 'document', source: doc.source });
        setText(doc.source);
        setFormat(doc.format);
      },
      (e: unknown) => {
        if (e instanceof ApiError && e.code === 'no_scenario' && /no scenario in force/.test(e.message)) {
          setLoaded({ kind: 'none' });
          setText(EXAMPLE);
          setFormat('yaml');
        } else setLoaded({ kind: 'failed', error: e });
      },
    );
  };
  useEffect(() => {
    setRefusal(null);
    setMarked(null);
    setSaved(null);
    load();
  }, [api, vendor]);

  const save = async () => {
    setBusy(true);
    setRefusal(null);
    setMarked(null);
    setSaved(null);
    try {
      const answer = await api.putScenario(vendor, text, format);
      setSaved(`In force since ${minute(answer.updatedAt)}: ${answer.handlers} handler${answer.handlers === 1 ? '' : 's'}.`);
      setLoaded({ kind: 'document', source: text });
    } catch (e) {
      setRefusal(e);
      if (e instanceof ApiError && e.code === 'invalid_scenario') {
        const where = locateProblem(text, format, { message: e.message, ...e.details });
        if (where !== null) setMarked({ line: where.line, message: e.message });
      }
    } finally {
      setBusy(false);
    }
  };

  if (loaded.kind === 'loading') return <Loading what={`the scenario of ${vendor}`} />;
  if (loaded.kind === 'failed') return <ErrorNote error={loaded.error} what={`The scenario of ${vendor} could not be read`} />;
  const changed = loaded.kind === 'none' || text !== loaded.source;
  return (
    <div class="scenario">
      <p class="row">
        {loaded.kind === 'none' ? <Badge>no scenario in force</Badge> : <Badge tone="green">in force</Badge>}
        {changed && loaded.kind === 'document' && <Badge tone="amber">edited, not saved</Badge>}
        <span class="hint">{loaded.kind === 'none' ? 'The twin answers as the vendor does. Below is an example to start from.' : 'Saved documents are live on the twin’s next request.'}</span>
      </p>
      <Editor label={`Scenario of ${vendor}`} value={text} onInput={(v) => (setText(v), setMarked(null))} marked={marked} />
      {refusal !== null && (
        <div class="refusal" role="alert">
          {marked !== null && <strong>Line {marked.line}: </strong>}
          <ErrorNote error={refusal} what="The world refused this document; the scenario in force is unchanged" />
        </div>
      )}
      {saved !== null && (
        <p class="saved" role="status">
          {saved}
        </p>
      )}
      {writes && (
        <div class="row">
          <label>
            Format{' '}
            <select name="format" value={format} onChange={(e) => setFormat(e.currentTarget.value as 'yaml' | 'json')}>
              <option value="yaml">YAML</option>
              <option value="json">JSON</option>
            </select>
          </label>
          <button type="button" class="primary" disabled={busy || text.trim() === ''} onClick={() => void save()}>
            Save and put in force
          </button>
          {loaded.kind === 'document' && changed && (
            <button type="button" onClick={() => (setText(loaded.source), setFormat(formatOf(loaded.source)), setRefusal(null), setMarked(null))}>
              Undo my edits
            </button>
          )}
          {loaded.kind === 'document' && (
            <ConfirmButton
              label="Remove the scenario"
              confirm="Yes, remove it"
              question={`${vendor} will answer as the vendor does.`}
              what="The scenario was not removed"
              onConfirm={async () => {
                await api.removeScenario(vendor);
                setSaved(null);
                load();
              }}
            />
          )}
        </div>
      )}
    </div>
  );
}

export function ScenariosSection(props: SectionProps) {
  const { config, writes } = props;
  const [vendor, setVendor] = useState(config.twins[0]?.vendor ?? '');
  return (
    <Card title="Scenarios">
      <p class="hint">A scenario makes a twin answer otherwise than its vendor for the requests it matches: a delay, a failure, a canned answer, a fault.</p>
      {!writes ? (
        <p class="muted">A read session cannot see scenarios: open the page with the world's token.</p>
      ) : config.twins.length === 0 ? (
        <p class="muted">This world has no twins.</p>
      ) : (
        <>
          <Tabs label="Twin" items={config.twins.map((t) => ({ id: t.vendor, label: t.vendor }))} current={vendor} onSelect={setVendor} />
          {/* Keyed: another twin's editor starts afresh, never showing the last twin's document under its name. */}
          <TwinScenario key={vendor} {...props} vendor={vendor} />
        </>
      )}
    </Card>
  );
}
