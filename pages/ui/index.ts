/**
 * The pages' UI library: what the console, the world page and every mirror share. Import from
 * here (`pages/ui/index.js`) and the CSS from `pages/ui/base.css`; every name below is kept
 * stable for the mirrors in twins/<vendor>/mirror/.
 */
export { readPageConfig } from './config.js';
export type { PageConfig } from './config.js';
export { ApiError, World, call } from './api.js';
export type { CallOptions } from './api.js';
export { openSession, passOf, signInWithToken, signOut } from './session.js';
export type { Browser, Opening, SessionInfo } from './session.js';
export { startPage } from './start.js';
export type { PageContext } from './start.js';
export { SignIn } from './signin.js';

export { ErrorNote, SecretField } from './ui.js';
export { ago, bytes, count, instant, minorUnits, minute, money, shortId, toDate } from './format.js';
export { Badge, StatusBadge, toneOf } from './badge.js';
export type { Tone } from './badge.js';
export { DetailList } from './detail.js';
export type { DetailItem } from './detail.js';
export { JsonView } from './json.js';
export { SideNav, Tabs } from './nav.js';
export type { NavGroup, NavItem } from './nav.js';
export { DataTable } from './table.js';
export type { Column, DataTableProps } from './table.js';
export { LoadMore, PrevNext, useCursorList, usePagedList } from './pager.js';
export type { CursorList, CursorPage, FetchPage, PagedList } from './pager.js';
export { Empty, Loading } from './states.js';
export { useAction, useInterval, useLoad, type Action } from './hooks.js';
export type { Loaded } from './hooks.js';
export { Link, navigate, useLocation } from './router.js';
export type { Where } from './router.js';
export { Card, Layout, TopBar, sessionLabel } from './layout.js';

export { ClockControls } from './clock.js';
export type { ClockControlsProps } from './clock.js';
export { MapTable } from './map.js';
export { TimelineTable, summary, traceId, typeRank } from './timeline.js';
export type { Approval, Branch, BranchMade, Change, ChangeRequest, Changeset, ChangesetList, ChangesetRow, CheckRow, Clock, Deployed, Entry, EntryCause, NamedKey, NamedKeyMade, Receipt, RecordChange, RequestReport, TimelineItem, TimelinePage, TwinRequestReport, TwinStatus, Verification, WorldMap } from './types.js';
