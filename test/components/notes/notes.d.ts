/** Types of notes.js, for the JavaScript twin (twin.ts) that shares it with the component. */
import type { Matcher } from '../../../sdk/twin/types.js';

export interface NotesIo {
  get(type: string, id: string): any; // eslint-disable-line @typescript-eslint/no-explicit-any -- records are the twin's own JSON
  list(type: string, options: { after?: string; before?: string; limit?: number; reverse?: boolean }): { items: { id: string; value: any }[]; hasMore: boolean }; // eslint-disable-line @typescript-eslint/no-explicit-any
  put(type: string, id: string, value: unknown): void;
  schedule(id: string, move: string, dueAt: string, data: unknown): void;
  emit(type: string, data: unknown): void;
  id(prefix: string): string;
  nowMs: number;
  position: number;
}

export const NOTE: string;
export const BY_SEQ: string;
export const manifest: {
  vendor: string;
  version: string;
  protocol: string;
  models: { hosts: string[]; resources: string[]; endpointEnv: string[] };
  requestScopes: never[];
  routes: { name: string; match: Matcher & { method: string } }[];
  stores: string[];
  moves: string[];
  scenarios: boolean;
};
export function errorBody(status: number, code: string, detail: string, field?: string): unknown;
export function route(name: string, request: { params: Record<string, string>; query: Record<string, string | string[]>; body: unknown }, io: NotesIo): { status: number; body: unknown };
export function archive(io: NotesIo, data: { id: string }): void;
export function notesStore(io: Pick<NotesIo, 'get' | 'list'>): unknown;
