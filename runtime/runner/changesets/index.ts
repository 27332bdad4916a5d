/** A world's changesets and origin as the runner holds them (`WorldChangesets`), and what tests and tools use. */
import type { Sealer } from '../../roots/sealing.js';
import type { ChangesetHost, ChangesetService } from '../services.js';
import { ChangesetSet } from './changesets.js';
import { Origins, type ParentApi } from './origins.js';
import { isSecretField, withheldSecrets } from './deploy.js';
import type { Change, Receipt } from './types.js';

export { ChangesetStore, replayedHeaders, type Exchange } from './store.js';
export { hashOf } from './body.js';
export { verifyApproval, approvalPayload } from './signing.js';
export type { ParentApi } from './origins.js';
export type * from './types.js';

function hiddenFromReader(change: Change, redact: ((type: string, value: unknown) => unknown) | undefined): Change {
  const writes = redact === undefined ? change.writes : change.writes.map((w) => ({ ...w, before: w.before === null ? null : redact(w.type, w.before), after: w.after === null ? null : redact(w.type, w.after) }));
  return { ...change, writes, answer: withheldSecrets(change.answer), request: { ...change.request, body: withheldBody(change.request.body, change.request.contentType) } };
}

/** A request body with its secret fields withheld (JSON or a form); anything else as it is. */
function withheldBody(body: string, contentType: string | null): string {
  if (body === '') return body;
  const type = (contentType ?? '').toLowerCase();
  if (type.includes('json')) {
    try {
      return JSON.stringify(withheldSecrets(JSON.parse(body)));
    } catch {
      return body;
    }
  }
  if (type.includes('x-www-form-urlencoded')) {
    const out = new URLSearchParams();
    for (const [k, v] of new URLSearchParams(body)) out.append(k, isSecretField(k) && v !== '' ? '[withheld]' : v);
    return out.toString();
  }
  return body;
}

export class WorldChangesets implements ChangesetService {
  readonly set: ChangesetSet;
  readonly origins: Origins;

  constructor(host: ChangesetHost, options: { sealer?: Sealer; parentApi?: ParentApi }) {
    this.set = new ChangesetSet(host, options.sealer !== undefined ? { sealer: options.sealer } : {});
    this.origins = new Origins(host, this.set, options);
  }

  list(): unknown {
    return this.set.list();
  }

  /**
   * One changeset whole. For a caller that may only read, the twin's secrets are hidden as the
   * log hides them (`redactFor`: the twin's redactor), and every field named `secret` (or
   * `…_secret`) in a request body or an answer is withheld: a hook's secret an app sent, a
   * signing secret a twin answered once.
   */
  show(name: string, redactFor?: (twin: string) => ((type: string, value: unknown) => unknown) | undefined): unknown {
    const view = this.set.view(this.set.get(name));
    if (redactFor === undefined) return view;
    return { ...view, changes: view.changes.map((c) => hiddenFromReader(c, redactFor(c.twin))) };
  }

  cut(body: unknown): Promise<unknown> {
    return this.set.cut(body);
  }

  receive(body: unknown): Promise<{ status: number; body: unknown }> {
    return this.set.receive(body);
  }

  verify(name: string): Promise<unknown> {
    return this.set.verify(name);
  }

  approve(name: string, body: unknown, who: string | undefined): Promise<unknown> {
    return this.set.approve(name, body, who);
  }

  deploy(name: string | null, body: unknown, credential: string | undefined): Promise<unknown> {
    return this.set.deploy(name, body, credential);
  }

  origin(): unknown {
    return this.origins.get();
  }

  putOrigin(body: unknown): Promise<unknown> {
    return this.origins.put(body);
  }

  pull(body: unknown): Promise<unknown> {
    return this.origins.pull(body);
  }

  pushToOrigin(): Promise<unknown> {
    return this.origins.push();
  }

  /** The newest receipt of a change of the twin, for its status. */
  lastReceipt(twin: string): Receipt | null {
    return this.set.store.lastReceipt(twin);
  }
}
