/** A world's changesets and origin as the runner holds them (`WorldChangesets`), and what tests and tools use. */
import type { Sealer } from '../../roots/sealing.js';
import type { ChangesetHost, ChangesetService } from '../services.js';
import { ChangesetSet } from './changesets.js';
import { Origins, type ParentApi } from './origins.js';
import type { Receipt } from './types.js';

export { ChangesetStore, type Exchange } from './store.js';
export { hashOf } from './body.js';
export { verifyApproval, approvalPayload } from './signing.js';
export type { ParentApi } from './origins.js';
export type * from './types.js';

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

  show(name: string): unknown {
    return this.set.view(this.set.get(name));
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
    let last: Receipt | null = null;
    for (const cs of this.set.store.all()) for (const r of cs.receipts) if (r.twin === twin && (last === null || r.at >= last.at)) last = r;
    return last;
  }
}
