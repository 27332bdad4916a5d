/**
 * The GitHub twin's root: how it keeps a copy of one real repository
 * (`https://api.github.com/repos/<owner>/<repo>`) — a refresh reads it through the host, which
 * adds the sealed credential; an ingest folds its webhooks. See README.md here.
 */
import type { TwinRoot } from '../../../../sdk/twin/types.js';
import { ingest } from './ingest.js';
import { read, start } from './refresh.js';

export const githubRoot: TwinRoot = {
  // A refresh costs a read per list page and per new git object: at most every 30 s by hand, hourly on a schedule.
  refresh: { atMost: '30s', every: '1h' },
  start,
  read,
  ingest: { scheme: 'github', event: ingest },
};
