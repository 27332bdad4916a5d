export type {
  BranchOptions,
  BranchRecord,
  ClockState,
  EmittedEvent,
  Entry,
  EntryCause,
  EntryDraft,
  HistoryCut,
  RecordListOptions,
  RecordPage,
  RecordWrite,
  TimelinePage,
  TimelineQuery,
  DiffQuery,
  WorldDiff,
  WorldMap,
} from './types.js';
export { WorldStore, World, CHECKPOINT_LIMIT_BYTES } from './world.js';
export { idSource, type IdSource } from './ids.js';
export { parseInstant, formatInstant, parseDuration, MAX_INSTANT_MS } from './time.js';
export { canonicalJson } from './canonical.js';
export { checkDraft, checkTwinName } from './validate.js';
