/**
 * Git's smart HTTP protocol (version 0/1, stateless RPC), so `git clone` and `git push`
 * against `{world_url}/github/{owner}/{repo}.git` work:
 *
 * - `GET /{owner}/{repo}.git/info/refs?service=git-upload-pack|git-receive-pack` advertises refs;
 * - `POST …/git-upload-pack` answers wants (after `NAK`, or an `ACK` for a common have) with a
 *   pack of everything reachable from them and not from the common haves;
 * - `POST …/git-receive-pack` reads the pushed pack, stores its objects under their own ids,
 *   moves the refs (each move sends the `push` webhook) and reports per ref.
 *
 * No side-band, no shallow clones, no protocol v2 (a v2 client falls back to v0). Credentials
 * are the same as the API's: git sends the token as the Basic password.
 */
import type { Handler, TwinContext, TwinRequest, TwinResponse } from '../../../../sdk/twin/index.js';
import { base64Decode, base64Encode, concat, utf8Encode } from '../lib/bytes.js';
import {
  SHA, fromRaw, getObject, getRef, listRefs, putObject, refConflict, toRaw, treeProblem, validRefName, type CommitObject, type GitObject,
} from '../lib/git.js';
import type { Call } from '../lib/http.js';
import { GhError } from '../errors.js';
import { FLUSH, PACK_LIMITS, PackError, pkt, readPack, readPktLines, writePackBase64, type RawType } from '../lib/pack.js';
import { authenticate } from '../lib/users.js';
import { InflateError, gunzip } from '../lib/zlib.js';
import { moveRef } from './gitdata.js';
import { canRead, canWrite, repoByName, type StoredRepo } from './repos.js';

const ZERO = '0000000000000000000000000000000000000000';
/** Ref updates in one push (git has no limit; each is a write and a webhook here). */
const MAX_PUSH_COMMANDS = 1000;
const AGENT = 'agent=twinkit-github/1';

function text(status: number, message: string, extra: Record<string, string> = {}): TwinResponse {
  return { status, headers: { 'content-type': 'text/plain; charset=utf-8', ...extra }, body: message + '\n' };
}

function binary(type: string, bytes: Uint8Array): TwinResponse {
  return binaryBase64(type, base64Encode(bytes));
}

function binaryBase64(type: string, bodyBase64: string): TwinResponse {
  return { status: 200, headers: { 'content-type': type, 'cache-control': 'no-cache' }, bodyBase64 };
}

/** The repository a git URL names, with the caller's rights; errors as git prints them. */
function gitRepo(req: TwinRequest, ctx: TwinContext, write: boolean): { repo: StoredRepo; call: Call } | TwinResponse {
  let caller;
  try {
    caller = authenticate(req, ctx);
  } catch (e) {
    if (e instanceof GhError) return text(401, 'Invalid username or token.', { 'www-authenticate': 'Basic realm="GitHub"' });
    throw e;
  }
  const name = (req.params['repo'] ?? '').replace(/\.git$/, '');
  const repo = repoByName(ctx.tree, req.params['owner'] ?? '', name);
  if (repo === undefined || !canRead(ctx.tree, caller, repo)) {
    return caller === null ? text(401, 'Authentication required.', { 'www-authenticate': 'Basic realm="GitHub"' }) : text(404, 'Repository not found.');
  }
  if (write) {
    if (caller === null) return text(401, 'Authentication required.', { 'www-authenticate': 'Basic realm="GitHub"' });
    if (req.readOnly) return text(403, 'Write access to repository not granted: this credential is read-only.');
    if (!canWrite(ctx.tree, caller, repo) || repo.archived) return text(403, `Permission to ${repo.owner}/${repo.name}.git denied to ${caller.login}.`);
  }
  return { repo, call: { req, ctx, caller, headers: {} } };
}

function capabilities(service: string, repo: StoredRepo, hasHead: boolean): string {
  if (service === 'git-upload-pack') return `${hasHead ? `symref=HEAD:refs/heads/${repo.default_branch} ` : ''}no-progress ${AGENT}`;
  return `report-status delete-refs no-thin ${AGENT}`;
}

export const infoRefs: Handler = (req, ctx) => {
  const service = typeof req.query['service'] === 'string' ? req.query['service'] : '';
  if (service !== 'git-upload-pack' && service !== 'git-receive-pack') return text(403, 'Dumb HTTP is not served; use a git client that speaks smart HTTP.');
  const found = gitRepo(req, ctx, service === 'git-receive-pack');
  if (!('repo' in found)) return found;
  const { repo } = found;
  const refs = listRefs(ctx.tree, repo.id);
  const head = getRef(ctx.tree, repo.id, `refs/heads/${repo.default_branch}`);
  const lines: Uint8Array[] = [pkt(`# service=${service}\n`), FLUSH];
  const all = [...(head === undefined || service === 'git-receive-pack' ? [] : [{ ref: 'HEAD', sha: head }]), ...refs];
  const caps = capabilities(service, repo, head !== undefined);
  if (all.length === 0) lines.push(pkt(`${ZERO} capabilities^{}\0${caps}\n`));
  all.forEach((r, i) => lines.push(pkt(i === 0 ? `${r.sha} ${r.ref}\0${caps}\n` : `${r.sha} ${r.ref}\n`)));
  lines.push(FLUSH);
  return binary(`application/x-${service}-advertisement`, concat(lines));
};

function requestBytes(req: TwinRequest): Uint8Array {
  const raw = req.bodyBase64 !== undefined ? base64Decode(req.bodyBase64) : req.bodyText !== undefined ? utf8Encode(req.bodyText) : new Uint8Array(0);
  if (raw === undefined) throw new PackError('unreadable request body');
  // A gzip body is held to a push's inflated limit too: a small body must not inflate to gigabytes.
  return (req.headers['content-encoding'] ?? '').toLowerCase() === 'gzip' ? gunzip(raw, PACK_LIMITS.totalBytes) : raw;
}

/** Every object reachable from `tips` (commits, their trees and blobs), skipping what `skip` holds. */
function reachable(ctx: TwinContext, repoId: number, tips: string[], skip: Set<string>): Map<string, GitObject> {
  const out = new Map<string, GitObject>();
  const stack = tips.slice();
  while (stack.length > 0) {
    const sha = stack.pop() as string;
    if (out.has(sha) || skip.has(sha)) continue;
    const o = getObject(ctx.tree, repoId, sha);
    if (o === undefined) continue;
    out.set(sha, o);
    if (o.t === 'commit') stack.push(o.tree, ...o.parents);
    else if (o.t === 'tree') for (const e of o.entries) if (e.type !== 'commit') stack.push(e.sha);
  }
  return out;
}

export const uploadPack: Handler = (req, ctx) => {
  const found = gitRepo(req, ctx, false);
  if (!('repo' in found)) return found;
  const { repo } = found;
  let lines: (string | null)[];
  try {
    lines = readPktLines(requestBytes(req), 0, false).lines;
  } catch (e) {
    if (e instanceof PackError || e instanceof InflateError) return text(400, `bad request: ${e.message}`);
    throw e;
  }
  const wants: string[] = [], haves: string[] = [];
  let done = false;
  for (const line of lines) {
    if (line === null) continue;
    const l = line.replace(/\n$/, '');
    if (l.startsWith('want ')) wants.push(l.slice(5, 45));
    else if (l.startsWith('have ')) haves.push(l.slice(5, 45));
    else if (l === 'done') done = true;
    else if (l.startsWith('shallow ') || l.startsWith('deepen')) return text(400, 'shallow clones are not supported by this twin');
  }
  for (const w of wants) if (!SHA.test(w) || getObject(ctx.tree, repo.id, w)?.t !== 'commit') return text(400, `not our ref ${w}`);
  const common = haves.filter((h) => SHA.test(h) && getObject(ctx.tree, repo.id, h)?.t === 'commit');
  const ack = common.length > 0 ? pkt(`ACK ${common[0]}\n`) : pkt('NAK\n');
  if (!done && wants.length > 0 && haves.length > 0 && common.length === 0) {
    // A negotiation round without a common commit: the client sends more haves, or done.
    return binary('application/x-git-upload-pack-result', ack);
  }
  if (wants.length === 0) return binary('application/x-git-upload-pack-result', new Uint8Array(0));
  const skip = new Set(reachable(ctx, repo.id, common, new Set()).keys());
  const objects = [...reachable(ctx, repo.id, wants, skip).values()].map(toRaw);
  return binaryBase64('application/x-git-upload-pack-result', writePackBase64(objects, ack));
};

export const receivePack: Handler = (req, ctx) => {
  const found = gitRepo(req, ctx, true);
  if (!('repo' in found)) return found;
  const { repo, call } = found;
  let commands: { old: string; new: string; ref: string }[] = [];
  let unpack = 'ok';
  try {
    const bytes = requestBytes(req);
    const head = readPktLines(bytes, 0, true);
    for (const line of head.lines) {
      if (line === null) continue;
      const l = line.split('\0')[0]?.replace(/\n$/, '') ?? '';
      const m = /^([0-9a-f]{40}) ([0-9a-f]{40}) (.+)$/.exec(l);
      if (m === null) throw new PackError(`bad command: ${l.slice(0, 80)}`);
      commands.push({ old: m[1] as string, new: m[2] as string, ref: m[3] as string });
      // Each command is a ref write and a push webhook: a push of thousands would pass the
      // world's writes per request, or its time.
      if (commands.length > MAX_PUSH_COMMANDS) throw new PackError(`too many ref updates in one push (more than ${MAX_PUSH_COMMANDS})`);
    }
    const packBytes = bytes.subarray(head.end);
    if (commands.some((c) => c.new !== ZERO) || packBytes.length > 0) {
      const lookup = (sha: string): { type: RawType; content: Uint8Array } | undefined => {
        const o = getObject(ctx.tree, repo.id, sha);
        return o === undefined ? undefined : toRaw(o);
      };
      const raws = readPack(packBytes, lookup);
      const stored: { sha: string; o: GitObject }[] = [];
      for (const raw of raws) {
        const o = fromRaw(raw.type, raw.content, raw.sha);
        if (o === undefined) throw new PackError(`object ${raw.sha} (${raw.type}) is not supported by this twin (annotated tags, signed commits)`);
        // What git's receive.fsckObjects refuses: a tree no clone could check out.
        const problem = o.t === 'tree' ? treeProblem(o.entries) : undefined;
        if (problem !== undefined) throw new PackError(`error in tree ${raw.sha}: ${problem}`);
        stored.push({ sha: raw.sha, o });
      }
      // Parents before children, so each commit's generation number can be computed when stored:
      // a depth-first walk over the pack's commits, linear in them.
      const commits = new Map<string, CommitObject>();
      for (const s of stored) {
        if (s.o.t === 'commit') commits.set(s.sha, s.o);
        else putObject(ctx, repo.id, s.o, s.sha);
      }
      const state = new Map<string, 'open' | 'stored'>();
      for (const root of commits.keys()) {
        if (state.has(root)) continue;
        state.set(root, 'open');
        const stack: { sha: string; next: number }[] = [{ sha: root, next: 0 }];
        while (stack.length > 0) {
          const top = stack[stack.length - 1] as { sha: string; next: number };
          const commit = commits.get(top.sha) as CommitObject;
          const parent = commit.parents[top.next++];
          if (parent === undefined) {
            putObject(ctx, repo.id, commit, top.sha);
            state.set(top.sha, 'stored');
            stack.pop();
          } else if (commits.has(parent)) {
            const seen = state.get(parent);
            if (seen === 'open') throw new PackError('commit parents form a cycle');
            if (seen === undefined) {
              state.set(parent, 'open');
              stack.push({ sha: parent, next: 0 });
            }
          }
        }
      }
    }
  } catch (e) {
    if (!(e instanceof PackError || e instanceof InflateError)) throw e;
    unpack = e.message.replace(/\n/g, ' ');
    commands = commands.length > 0 ? commands : [];
  }
  // Deletions first, as one push may replace `refs/heads/a` with `refs/heads/a/b`; answers in
  // the order of the commands.
  const statuses: string[] = [];
  for (const deletions of [true, false]) {
    commands.forEach((c, i) => {
      if ((c.new === ZERO) === deletions) statuses[i] = command(c);
    });
  }
  function command(c: { old: string; new: string; ref: string }): string {
    if (unpack !== 'ok') return `ng ${c.ref} unpacker error`;
    if (!c.ref.startsWith('refs/') || !validRefName(c.ref)) return `ng ${c.ref} funny refname`;
    const current = getRef(ctx.tree, repo.id, c.ref);
    if ((current ?? ZERO) !== c.old) return `ng ${c.ref} stale info`;
    if (c.new !== ZERO && getObject(ctx.tree, repo.id, c.new)?.t !== 'commit') return `ng ${c.ref} missing necessary objects`;
    if (c.new === ZERO && c.ref === `refs/heads/${repo.default_branch}`) return `ng ${c.ref} refusing to delete the current branch`;
    // git warns "deleting a non-existent ref", reports ok, and runs no hook for it: no webhook.
    if (c.new === ZERO && current === undefined) return `ok ${c.ref}`;
    if (current === undefined && c.new !== ZERO) {
      // git's own words when a ref and a folder of the same name collide.
      const conflict = refConflict(ctx.tree, repo.id, c.ref);
      if (conflict !== undefined) return `ng ${c.ref} cannot lock ref '${c.ref}': '${conflict}' exists; cannot create '${c.ref}'`;
    }
    moveRef(call, repo, c.ref, current ?? null, c.new === ZERO ? null : c.new, false);
    return `ok ${c.ref}`;
  }
  const out = [pkt(unpack === 'ok' ? 'unpack ok\n' : `unpack ${unpack}\n`), ...statuses.map((s) => pkt(s + '\n')), FLUSH];
  return binary('application/x-git-receive-pack-result', concat(out));
};
