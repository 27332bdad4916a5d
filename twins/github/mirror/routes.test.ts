/**
 * The mirror's URLs are the twin's API paths: a path someone opens (or pastes from an API answer's
 * `url`) shows what it names, and the paths the mirror makes lead back to the same view.
 */
import { describe, expect, it } from 'vitest';
import { HOME_PATH, pathOf, repoOf, vendorPathOf, viewOf, type View } from './routes.js';

describe('a vendor path opened in the browser', () => {
  it('shows what the API path names', () => {
    expect(viewOf('/user/repos')).toEqual({ kind: 'home', page: 1 });
    expect(viewOf('/user/repos', '?page=3&per_page=30')).toEqual({ kind: 'home', page: 3 });
    expect(viewOf('/repositories', '?after=acme%2Fshop')).toEqual({ kind: 'all', after: 'acme/shop' });
    expect(viewOf('/orgs/acme/repos')).toEqual({ kind: 'owner', owner: 'acme', org: true, page: 1 });
    expect(viewOf('/users/octocat')).toEqual({ kind: 'owner', owner: 'octocat', org: false, page: 1 });
    expect(viewOf('/repos/acme/shop')).toEqual({ kind: 'repo', owner: 'acme', repo: 'shop' });
    expect(viewOf('/repos/acme/shop/readme')).toEqual({ kind: 'repo', owner: 'acme', repo: 'shop' });
    expect(viewOf('/repos/acme/shop/contents/src/app.ts', '?ref=dev')).toEqual({ kind: 'contents', owner: 'acme', repo: 'shop', path: 'src/app.ts', ref: 'dev' });
    expect(viewOf('/repos/acme/shop/contents')).toEqual({ kind: 'contents', owner: 'acme', repo: 'shop', path: '', ref: null });
    expect(viewOf('/repos/acme/shop/issues/7')).toEqual({ kind: 'issue', owner: 'acme', repo: 'shop', number: 7 });
    expect(viewOf('/repos/acme/shop/issues/7/comments')).toEqual({ kind: 'issue', owner: 'acme', repo: 'shop', number: 7 });
    expect(viewOf('/repos/acme/shop/issues', '?state=closed&labels=bug&page=2')).toEqual({ kind: 'issues', owner: 'acme', repo: 'shop', state: 'closed', labels: 'bug', page: 2 });
    expect(viewOf('/repos/acme/shop/pulls/3')).toEqual({ kind: 'pull', owner: 'acme', repo: 'shop', number: 3, tab: 'conversation', page: 1 });
    expect(viewOf('/repos/acme/shop/pulls/3/files')).toEqual({ kind: 'pull', owner: 'acme', repo: 'shop', number: 3, tab: 'files', page: 1 });
    expect(viewOf('/repos/acme/shop/pulls/3/reviews/12')).toEqual({ kind: 'pull', owner: 'acme', repo: 'shop', number: 3, tab: 'conversation', page: 1 });
    expect(viewOf('/repos/acme/shop/commits', '?sha=dev&path=README.md')).toEqual({ kind: 'commits', owner: 'acme', repo: 'shop', ref: 'dev', path: 'README.md', page: 1 });
    expect(viewOf('/repos/acme/shop/commits/0123abc')).toEqual({ kind: 'commit', owner: 'acme', repo: 'shop', sha: '0123abc', page: 1 });
    expect(viewOf('/repos/acme/shop/commits/main/status')).toEqual({ kind: 'commit', owner: 'acme', repo: 'shop', sha: 'main', page: 1 });
    expect(viewOf('/repos/acme/shop/git/commits/0123abc')).toEqual({ kind: 'commit', owner: 'acme', repo: 'shop', sha: '0123abc', page: 1 });
    expect(viewOf('/repos/acme/shop/git/trees/abc')).toEqual({ kind: 'git-tree', owner: 'acme', repo: 'shop', sha: 'abc' });
    expect(viewOf('/repos/acme/shop/branches')).toEqual({ kind: 'branches', owner: 'acme', repo: 'shop', page: 1 });
    expect(viewOf('/repos/acme/shop/compare/main...feature/x')).toEqual({ kind: 'compare', owner: 'acme', repo: 'shop', basehead: 'main...feature/x' });
  });

  it('keeps names with slashes and escapes whole: branches, refs and paths', () => {
    // A branch's page is its code: the contents at that ref.
    expect(viewOf('/repos/acme/shop/branches/feature/login')).toEqual({ kind: 'contents', owner: 'acme', repo: 'shop', path: '', ref: 'feature/login' });
    expect(viewOf('/repos/acme/shop/commits/feature/login')).toEqual({ kind: 'commit', owner: 'acme', repo: 'shop', sha: 'feature/login', page: 1 });
    expect(viewOf('/repos/acme/shop/contents/docs/a%20b%23c.md')).toMatchObject({ kind: 'contents', path: 'docs/a b#c.md' });
  });

  it('says what it does not show, inside the repository when the path names one', () => {
    expect(viewOf('/repos/acme/shop/hooks')).toEqual({ kind: 'unknown', path: '/repos/acme/shop/hooks', repo: { owner: 'acme', repo: 'shop' } });
    expect(viewOf('/repos/acme/shop/issues/abc')).toMatchObject({ kind: 'unknown', repo: { owner: 'acme', repo: 'shop' } });
    expect(viewOf('/repos/acme/shop/pulls/0')).toMatchObject({ kind: 'unknown' });
    expect(viewOf('/rate_limit')).toEqual({ kind: 'unknown', path: '/rate_limit', repo: null });
    expect(viewOf('/repos/acme')).toMatchObject({ kind: 'unknown', repo: null });
    // Bad percent-encoding is not a crash.
    expect(viewOf('/repos/acme/%E0%A4%A/issues')).toMatchObject({ kind: 'unknown', repo: null });
  });

  it('reads hostile or odd query values as the defaults', () => {
    expect(viewOf('/repos/a/b/issues', '?state=everything&page=-1')).toMatchObject({ state: 'open', page: 1 });
    expect(viewOf('/repos/a/b/issues', '?page=1e9')).toMatchObject({ page: 1 });
    expect(viewOf('/repos/a/b/pulls', '?state=all&page=0')).toMatchObject({ state: 'all', page: 1 });
    expect(viewOf('/repos/a/b/contents/x', '?ref=')).toMatchObject({ ref: null });
  });
});

describe('the paths the mirror navigates to', () => {
  const views: View[] = [
    { kind: 'home', page: 1 },
    { kind: 'home', page: 4 },
    { kind: 'all', after: null },
    { kind: 'all', after: 'acme/shop' },
    { kind: 'owner', owner: 'acme', org: true, page: 2 },
    { kind: 'repo', owner: 'acme', repo: 'shop' },
    { kind: 'contents', owner: 'acme', repo: 'shop', path: '', ref: 'feature/login' },
    { kind: 'contents', owner: 'acme', repo: 'shop', path: 'docs/a b#c?.md', ref: null },
    { kind: 'git-tree', owner: 'acme', repo: 'shop', sha: 'f'.repeat(40) },
    { kind: 'git-blob', owner: 'acme', repo: 'shop', sha: 'e'.repeat(40) },
    { kind: 'commits', owner: 'acme', repo: 'shop', ref: 'dev', path: 'src/a&b.ts', page: 2 },
    { kind: 'commit', owner: 'acme', repo: 'shop', sha: 'a'.repeat(40), page: 1 },
    { kind: 'commit', owner: 'acme', repo: 'shop', sha: 'a'.repeat(40), page: 2 },
    { kind: 'branches', owner: 'acme', repo: 'shop', page: 1 },
    { kind: 'issues', owner: 'acme', repo: 'shop', state: 'all', labels: 'bug,good first issue', page: 3 },
    { kind: 'issue', owner: 'acme', repo: 'shop', number: 12 },
    { kind: 'pulls', owner: 'acme', repo: 'shop', state: 'closed', page: 1 },
    { kind: 'pull', owner: 'acme', repo: 'shop', number: 3, tab: 'files', page: 2 },
    { kind: 'pull', owner: 'acme', repo: 'shop', number: 3, tab: 'commits', page: 1 },
    { kind: 'compare', owner: 'acme', repo: 'shop', basehead: 'main...feature/login' },
    { kind: 'labels', owner: 'acme', repo: 'my.repo-1' },
  ];

  it('lead back to the same view', () => {
    for (const v of views) {
      const p = pathOf(v);
      const q = p.indexOf('?');
      expect(viewOf(q < 0 ? p : p.slice(0, q), q < 0 ? '' : p.slice(q)), p).toEqual(v);
    }
  });

  it('are the API paths the twin answers, defaults left out', () => {
    expect(pathOf({ kind: 'home', page: 1 })).toBe(HOME_PATH);
    expect(pathOf({ kind: 'issues', owner: 'acme', repo: 'shop', state: 'open', labels: null, page: 1 })).toBe('/repos/acme/shop/issues');
    expect(pathOf({ kind: 'contents', owner: 'acme', repo: 'shop', path: 'docs/a b.md', ref: 'dev' })).toBe('/repos/acme/shop/contents/docs/a%20b.md?ref=dev');
    expect(pathOf({ kind: 'pull', owner: 'acme', repo: 'shop', number: 3, tab: 'conversation', page: 1 })).toBe('/repos/acme/shop/pulls/3');
    expect(repoOf(viewOf('/repos/acme/shop/pulls/3'))).toEqual({ owner: 'acme', repo: 'shop' });
    expect(repoOf(viewOf('/user/repos'))).toBeNull();
  });
});

describe('where the page is', () => {
  it('finds the vendor path under the mirror\'s base, and none at the mirror\'s own address', () => {
    expect(vendorPathOf('/acme/shop/github/repos/acme/shop', '/acme/shop/github')).toBe('/repos/acme/shop');
    expect(vendorPathOf('/acme/shop/github/mirror/', '/acme/shop/github')).toBeNull();
    expect(vendorPathOf('/acme/shop/github/mirror', '/acme/shop/github')).toBeNull();
    expect(vendorPathOf('/acme/shop/stripe/v1/customers', '/acme/shop/github')).toBeNull();
    expect(vendorPathOf('/acme/shop/githubx/repos', '/acme/shop/github')).toBeNull();
  });
});
