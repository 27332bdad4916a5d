/** The parts of GitHub's REST objects the mirror shows (the twin answers GitHub's full shapes). */

export interface User {
  login: string;
  id: number;
  type?: string;
  site_admin?: boolean;
  name?: string | null;
}

export interface Repo {
  id: number;
  name: string;
  full_name: string;
  owner: User;
  private: boolean;
  archived?: boolean;
  description: string | null;
  homepage?: string | null;
  default_branch: string;
  topics?: string[];
  open_issues_count: number;
  created_at: string;
  updated_at: string;
  pushed_at: string | null;
}

/** A repository as the twin's `repositories` store lists it (twin/stores.ts). */
export interface RepoSummary {
  id: number;
  full_name: string;
  owner: string;
  name: string;
  private: boolean;
  archived: boolean;
  description: string | null;
  default_branch: string;
  topics: string[];
  open_issues_count: number;
  updated_at: string;
  pushed_at: string | null;
}

export interface Label {
  id: number;
  name: string;
  color: string;
  description: string | null;
}

export interface Milestone {
  number: number;
  title: string;
  state: string;
}

export interface Issue {
  number: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  state_reason?: string | null;
  locked: boolean;
  user: User | null;
  labels: Label[];
  assignees: User[];
  milestone: Milestone | null;
  comments: number;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  closed_by?: User | null;
  author_association?: string;
  /** Present when the issue is a pull request. */
  pull_request?: { url: string; merged_at: string | null };
  draft?: boolean;
}

export interface Comment {
  id: number;
  body: string;
  user: User | null;
  created_at: string;
  updated_at: string;
  author_association?: string;
}

export interface BranchEnd {
  label: string;
  ref: string;
  sha: string;
}

export interface Pull {
  number: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  locked: boolean;
  user: User | null;
  labels: Label[];
  assignees: User[];
  requested_reviewers?: User[];
  milestone: Milestone | null;
  draft?: boolean;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  merged_at: string | null;
  merge_commit_sha?: string | null;
  head: BranchEnd;
  base: BranchEnd;
  /** The rest are in a single pull request's answer only. */
  merged?: boolean;
  mergeable?: boolean | null;
  mergeable_state?: string;
  merged_by?: User | null;
  comments?: number;
  commits?: number;
  additions?: number;
  deletions?: number;
  changed_files?: number;
}

export interface Review {
  id: number;
  user: User | null;
  body: string | null;
  state: string;
  submitted_at?: string | null;
}

export interface ReviewComment {
  id: number;
  pull_request_review_id?: number | null;
  user: User | null;
  body: string;
  path: string;
  line?: number | null;
  side?: string;
  diff_hunk?: string;
  created_at: string;
}

export interface GitPerson {
  name: string;
  email: string;
  date: string;
}

export interface Commit {
  sha: string;
  commit: { message: string; author: GitPerson; committer: GitPerson; tree: { sha: string }; comment_count?: number };
  author: User | null;
  committer: User | null;
  parents: { sha: string }[];
  /** In a single commit's answer only. */
  stats?: { additions: number; deletions: number; total: number };
  files?: DiffFile[];
}

export interface DiffFile {
  sha?: string | null;
  filename: string;
  previous_filename?: string;
  status: 'added' | 'removed' | 'modified' | 'renamed' | 'copied' | 'changed' | 'unchanged';
  additions: number;
  deletions: number;
  changes: number;
  /** Absent for a binary file, or one past GitHub's diff limits. */
  patch?: string;
}

export interface Compare {
  status: string;
  ahead_by: number;
  behind_by: number;
  total_commits: number;
  commits: Commit[];
  files?: DiffFile[];
  merge_base_commit: Commit;
}

export interface Branch {
  name: string;
  commit: { sha: string };
  protected: boolean;
}

/** One entry of a folder (the contents API's array). */
export interface ContentEntry {
  type: 'file' | 'dir' | 'symlink' | 'submodule';
  name: string;
  path: string;
  sha: string;
  size: number;
}

/** A file (the contents API's object). */
export interface ContentFile extends ContentEntry {
  content?: string;
  encoding?: string;
}

export interface GitTree {
  sha: string;
  truncated: boolean;
  tree: { path: string; mode: string; type: 'blob' | 'tree' | 'commit'; sha: string; size?: number }[];
}

export interface GitBlob {
  sha: string;
  size: number;
  content: string;
  encoding: 'base64' | 'utf-8';
}
