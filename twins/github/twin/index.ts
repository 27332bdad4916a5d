/**
 * The GitHub twin: GitHub's REST API as `@octokit/rest` uses it. This file is the entry the
 * build bundles into one sandbox script; it may import only `sdk/twin/` and this folder.
 *
 * Route names are Octokit's method names (`repos.get`) where Octokit has one, so the coverage
 * table (`../coverage.ts`) lines up with `@octokit/plugin-rest-endpoint-methods`.
 */
import { defineTwin, type Route } from '../../../sdk/twin/index.js';
import { route, type GhHandler } from './lib/http.js';
import { failureBody, notFound } from './errors.js';
import * as accounts from './resources/accounts.js';
import * as code from './resources/code.js';
import * as git from './resources/gitdata.js';
import * as hooks from './resources/hooks.js';
import * as issues from './resources/issues.js';
import * as pulls from './resources/pulls.js';
import * as repos from './resources/repos.js';
import * as releases from './resources/releases.js';
import * as rc from './resources/review_comments.js';
import * as search from './resources/search.js';
import * as smart from './resources/smarthttp.js';
import * as statuses from './resources/statuses.js';
import { githubRoot } from './root/index.js';
import { repositoriesStore } from './stores.js';

type M = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

function r(name: string, method: M, path: string, fn: GhHandler, auth?: 'required'): Route {
  return { name, match: { method, path }, handle: route(fn, auth === undefined ? {} : { auth }) };
}

const R = '/repos/:owner/:repo';

export const routes: Route[] = [
  // accounts
  r('users.getAuthenticated', 'GET', '/user', accounts.getAuthenticated, 'required'),
  r('users.updateAuthenticated', 'PATCH', '/user', accounts.updateAuthenticated),
  r('users.getByUsername', 'GET', '/users/:username', accounts.getByUsername),
  r('enterpriseAdmin.createUser', 'POST', '/admin/users', accounts.adminCreateUser),
  r('enterpriseAdmin.deleteUser', 'DELETE', '/admin/users/:username', accounts.adminDeleteUser),
  r('enterpriseAdmin.createImpersonationOAuthToken', 'POST', '/admin/users/:username/authorizations', accounts.adminCreateToken),
  r('enterpriseAdmin.createOrg', 'POST', '/admin/organizations', accounts.adminCreateOrg),
  r('enterpriseAdmin.suspendUser', 'PUT', '/users/:username/suspended', accounts.suspend),
  r('enterpriseAdmin.unsuspendUser', 'DELETE', '/users/:username/suspended', accounts.suspend),
  r('orgs.get', 'GET', '/orgs/:org', accounts.getOrg),
  r('orgs.setMembershipForUser', 'PUT', '/orgs/:org/memberships/:username', accounts.setMembership),
  r('orgs.listMembers', 'GET', '/orgs/:org/members', accounts.listOrgMembers),
  r('rateLimit.get', 'GET', '/rate_limit', accounts.rateLimit),
  // repositories
  r('repos.createForAuthenticatedUser', 'POST', '/user/repos', repos.createForUser),
  r('repos.listForAuthenticatedUser', 'GET', '/user/repos', repos.listForAuthenticatedUser, 'required'),
  r('repos.createInOrg', 'POST', '/orgs/:org/repos', repos.createInOrg),
  r('repos.listForOrg', 'GET', '/orgs/:org/repos', repos.listForOrg),
  r('repos.listForUser', 'GET', '/users/:username/repos', repos.listForUser),
  r('repos.get', 'GET', R, repos.getRepo),
  r('repos.update', 'PATCH', R, repos.updateRepo),
  r('repos.delete', 'DELETE', R, repos.deleteRepo),
  r('repos.listCollaborators', 'GET', `${R}/collaborators`, repos.listCollaborators),
  r('repos.checkCollaborator', 'GET', `${R}/collaborators/:username`, repos.checkCollaborator),
  r('repos.addCollaborator', 'PUT', `${R}/collaborators/:username`, repos.addCollaborator),
  r('repos.removeCollaborator', 'DELETE', `${R}/collaborators/:username`, repos.removeCollaborator),
  r('repos.getCollaboratorPermissionLevel', 'GET', `${R}/collaborators/:username/permission`, repos.getCollaboratorPermission),
  r('repos.getAllTopics', 'GET', `${R}/topics`, repos.getTopics),
  r('repos.replaceAllTopics', 'PUT', `${R}/topics`, repos.replaceTopics),
  // branches and git data
  r('repos.listBranches', 'GET', `${R}/branches`, git.listBranches),
  r('repos.getBranch', 'GET', `${R}/branches/*branch`, git.getBranch),
  r('repos.listTags', 'GET', `${R}/tags`, git.listTags),
  r('git.createBlob', 'POST', `${R}/git/blobs`, git.createBlob),
  r('git.getBlob', 'GET', `${R}/git/blobs/:file_sha`, git.getBlob),
  r('git.createTree', 'POST', `${R}/git/trees`, git.createTree),
  r('git.getTree', 'GET', `${R}/git/trees/:tree_sha`, git.getTree),
  r('git.createCommit', 'POST', `${R}/git/commits`, git.createCommit),
  r('git.getCommit', 'GET', `${R}/git/commits/:commit_sha`, git.getGitCommit),
  r('git.listRefs', 'GET', `${R}/git/refs`, git.listAllRefs),
  r('git.createRef', 'POST', `${R}/git/refs`, git.createRef),
  r('git.getRef', 'GET', `${R}/git/ref/*ref`, git.getRefRoute),
  r('git.listMatchingRefs', 'GET', `${R}/git/matching-refs/*ref`, git.matchingRefs),
  r('git.listRefsUnder', 'GET', `${R}/git/refs/*ref`, git.listAllRefs),
  r('git.updateRef', 'PATCH', `${R}/git/refs/*ref`, git.updateRef),
  r('git.deleteRef', 'DELETE', `${R}/git/refs/*ref`, git.deleteRefRoute),
  // contents, commits, compare
  r('repos.getReadme', 'GET', `${R}/readme`, code.getReadme),
  r('repos.getContentRoot', 'GET', `${R}/contents`, code.getContent),
  r('repos.getContent', 'GET', `${R}/contents/*path`, code.getContent),
  r('repos.createOrUpdateFileContents', 'PUT', `${R}/contents/*path`, code.putContent),
  r('repos.deleteFile', 'DELETE', `${R}/contents/*path`, code.deleteContent),
  r('repos.listCommits', 'GET', `${R}/commits`, code.listCommits),
  r('repos.getCommit', 'GET', `${R}/commits/*ref`, code.getCommitRoute),
  r('repos.createCommitStatus', 'POST', `${R}/statuses/:sha`, statuses.createStatus),
  r('repos.listCommitStatusesForRef', 'GET', `${R}/commits/:ref/statuses`, statuses.listStatuses),
  r('repos.getCombinedStatusForRef', 'GET', `${R}/commits/:ref/status`, statuses.combinedStatus),
  r('repos.compareCommitsWithBasehead', 'GET', `${R}/compare/*basehead`, code.compare),
  // issues
  r('issues.list', 'GET', '/issues', issues.listEverywhere, 'required'),
  r('issues.listForAuthenticatedUser', 'GET', '/user/issues', issues.listForUser, 'required'),
  r('issues.listForOrg', 'GET', '/orgs/:org/issues', issues.listForOrg, 'required'),
  r('issues.listForRepo', 'GET', `${R}/issues`, issues.listIssues),
  r('issues.create', 'POST', `${R}/issues`, issues.createIssue),
  r('issues.listCommentsForRepo', 'GET', `${R}/issues/comments`, issues.listRepoComments),
  r('issues.getComment', 'GET', `${R}/issues/comments/:comment_id`, issues.getComment),
  r('issues.updateComment', 'PATCH', `${R}/issues/comments/:comment_id`, issues.updateComment),
  r('issues.deleteComment', 'DELETE', `${R}/issues/comments/:comment_id`, issues.deleteComment),
  r('issues.get', 'GET', `${R}/issues/:issue_number`, issues.getIssue),
  r('issues.update', 'PATCH', `${R}/issues/:issue_number`, issues.updateIssue),
  r('issues.lock', 'PUT', `${R}/issues/:issue_number/lock`, issues.lockIssue),
  r('issues.unlock', 'DELETE', `${R}/issues/:issue_number/lock`, issues.lockIssue),
  r('issues.listComments', 'GET', `${R}/issues/:issue_number/comments`, issues.listComments),
  r('issues.createComment', 'POST', `${R}/issues/:issue_number/comments`, issues.createComment),
  r('issues.listLabelsOnIssue', 'GET', `${R}/issues/:issue_number/labels`, issues.listIssueLabels),
  r('issues.addLabels', 'POST', `${R}/issues/:issue_number/labels`, issues.changeIssueLabels),
  r('issues.setLabels', 'PUT', `${R}/issues/:issue_number/labels`, issues.changeIssueLabels),
  r('issues.removeAllLabels', 'DELETE', `${R}/issues/:issue_number/labels`, issues.changeIssueLabels),
  r('issues.removeLabel', 'DELETE', `${R}/issues/:issue_number/labels/:name`, issues.removeIssueLabel),
  r('issues.addAssignees', 'POST', `${R}/issues/:issue_number/assignees`, issues.changeAssignees),
  r('issues.removeAssignees', 'DELETE', `${R}/issues/:issue_number/assignees`, issues.changeAssignees),
  r('issues.listAssignees', 'GET', `${R}/assignees`, issues.listAssignees),
  r('issues.checkUserCanBeAssigned', 'GET', `${R}/assignees/:assignee`, issues.checkAssignee),
  r('issues.listLabelsForRepo', 'GET', `${R}/labels`, issues.listLabels),
  r('issues.createLabel', 'POST', `${R}/labels`, issues.createLabel),
  r('issues.getLabel', 'GET', `${R}/labels/:name`, issues.getLabel),
  r('issues.updateLabel', 'PATCH', `${R}/labels/:name`, issues.updateLabel),
  r('issues.deleteLabel', 'DELETE', `${R}/labels/:name`, issues.deleteLabel),
  r('issues.listMilestones', 'GET', `${R}/milestones`, issues.listMilestones),
  r('issues.createMilestone', 'POST', `${R}/milestones`, issues.createMilestone),
  r('issues.getMilestone', 'GET', `${R}/milestones/:milestone_number`, issues.getMilestone),
  r('issues.updateMilestone', 'PATCH', `${R}/milestones/:milestone_number`, issues.updateMilestone),
  r('issues.deleteMilestone', 'DELETE', `${R}/milestones/:milestone_number`, issues.deleteMilestone),
  // pull requests
  r('pulls.list', 'GET', `${R}/pulls`, pulls.listPulls),
  r('pulls.create', 'POST', `${R}/pulls`, pulls.createPull),
  r('pulls.get', 'GET', `${R}/pulls/:pull_number`, pulls.getPull),
  r('pulls.update', 'PATCH', `${R}/pulls/:pull_number`, pulls.updatePull),
  r('pulls.listCommits', 'GET', `${R}/pulls/:pull_number/commits`, pulls.listPullCommits),
  r('pulls.listFiles', 'GET', `${R}/pulls/:pull_number/files`, pulls.listPullFiles),
  r('pulls.checkIfMerged', 'GET', `${R}/pulls/:pull_number/merge`, pulls.checkMerged),
  r('pulls.merge', 'PUT', `${R}/pulls/:pull_number/merge`, pulls.mergePull),
  r('pulls.listRequestedReviewers', 'GET', `${R}/pulls/:pull_number/requested_reviewers`, pulls.listRequestedReviewers),
  r('pulls.requestReviewers', 'POST', `${R}/pulls/:pull_number/requested_reviewers`, pulls.changeRequestedReviewers),
  r('pulls.removeRequestedReviewers', 'DELETE', `${R}/pulls/:pull_number/requested_reviewers`, pulls.changeRequestedReviewers),
  r('pulls.listReviewCommentsForRepo', 'GET', `${R}/pulls/comments`, rc.listReviewCommentsForRepo),
  r('pulls.getReviewComment', 'GET', `${R}/pulls/comments/:comment_id`, rc.getReviewComment),
  r('pulls.updateReviewComment', 'PATCH', `${R}/pulls/comments/:comment_id`, rc.updateReviewComment),
  r('pulls.deleteReviewComment', 'DELETE', `${R}/pulls/comments/:comment_id`, rc.deleteReviewComment),
  r('pulls.listReviewComments', 'GET', `${R}/pulls/:pull_number/comments`, rc.listReviewComments),
  r('pulls.createReviewComment', 'POST', `${R}/pulls/:pull_number/comments`, rc.createReviewComment),
  r('pulls.createReplyForReviewComment', 'POST', `${R}/pulls/:pull_number/comments/:comment_id/replies`, rc.createReply),
  r('pulls.listReviews', 'GET', `${R}/pulls/:pull_number/reviews`, pulls.listReviews),
  r('pulls.createReview', 'POST', `${R}/pulls/:pull_number/reviews`, pulls.createReview),
  r('pulls.getReview', 'GET', `${R}/pulls/:pull_number/reviews/:review_id`, pulls.getReview),
  r('pulls.updateReview', 'PUT', `${R}/pulls/:pull_number/reviews/:review_id`, pulls.updateReview),
  r('pulls.deletePendingReview', 'DELETE', `${R}/pulls/:pull_number/reviews/:review_id`, pulls.deletePendingReview),
  r('pulls.submitReview', 'POST', `${R}/pulls/:pull_number/reviews/:review_id/events`, pulls.submitReview),
  // releases
  r('repos.listReleases', 'GET', `${R}/releases`, releases.listReleases),
  r('repos.createRelease', 'POST', `${R}/releases`, releases.createRelease),
  r('repos.getLatestRelease', 'GET', `${R}/releases/latest`, releases.getLatestRelease),
  r('repos.getReleaseByTag', 'GET', `${R}/releases/tags/:tag`, releases.getReleaseByTag),
  r('repos.getRelease', 'GET', `${R}/releases/:release_id`, releases.getRelease),
  r('repos.updateRelease', 'PATCH', `${R}/releases/:release_id`, releases.updateRelease),
  r('repos.deleteRelease', 'DELETE', `${R}/releases/:release_id`, releases.deleteRelease),
  // search
  r('search.issuesAndPullRequests', 'GET', '/search/issues', search.searchIssues),
  // webhooks
  r('repos.listWebhooks', 'GET', `${R}/hooks`, hooks.listHooks),
  r('repos.createWebhook', 'POST', `${R}/hooks`, hooks.createHook),
  r('repos.getWebhook', 'GET', `${R}/hooks/:hook_id`, hooks.getHook),
  r('repos.updateWebhook', 'PATCH', `${R}/hooks/:hook_id`, hooks.updateHook),
  r('repos.deleteWebhook', 'DELETE', `${R}/hooks/:hook_id`, hooks.deleteHook),
  r('repos.pingWebhook', 'POST', `${R}/hooks/:hook_id/pings`, hooks.pingHook),
  r('repos.listWebhookDeliveries', 'GET', `${R}/hooks/:hook_id/deliveries`, hooks.listDeliveries),
  r('repos.getWebhookDelivery', 'GET', `${R}/hooks/:hook_id/deliveries/:delivery_id`, hooks.getDelivery),
  r('repos.redeliverWebhookDelivery', 'POST', `${R}/hooks/:hook_id/deliveries/:delivery_id/attempts`, hooks.redeliver),
  // git's smart HTTP (git clone / git push against {world_url}/github/{owner}/{repo}.git)
  { name: 'git.smartInfoRefs', match: { method: 'GET', path: '/:owner/:repo/info/refs' }, handle: smart.infoRefs },
  { name: 'git.smartUploadPack', match: { method: 'POST', path: '/:owner/:repo/git-upload-pack' }, handle: smart.uploadPack },
  { name: 'git.smartReceivePack', match: { method: 'POST', path: '/:owner/:repo/git-receive-pack' }, handle: smart.receivePack },
  // twin-only: a deliverer records what a webhook receiver answered
  r('twin.recordDeliveryResult', 'PUT', '/_twin/repositories/:repository_id/hooks/:hook_id/deliveries/:delivery_id', hooks.recordDeliveryResult),
  // GitHub answers any other path with its 404 (after checking the credential).
  { name: 'unrecognized', match: { method: ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'], path: '/*rest' }, handle: route(() => { throw notFound(); }) },
];

export default defineTwin({
  vendor: 'github',
  version: '2022-11-28',
  protocol: 'http',
  models: {
    hosts: ['api.github.com'],
    resources: ['user', 'token', 'repo', 'obj', 'ref', 'issue', 'pull', 'review', 'comment', 'label', 'milestone', 'hook', 'delivery', 'status', 'release', 'review_comment'],
    endpointEnv: ['GITHUB_API_URL'],
  },
  requestScopes: ['read'],
  routes,
  moves: { 'webhook.result': hooks.webhookResult },
  // Read by the mirror (twins/github/mirror/): every repository of the world, which no vendor path lists.
  stores: { repositories: repositoriesStore },
  errorBody: failureBody,
  // As GitHub answers `********`: a reader of the world's history never sees a hook's secret.
  secrets: { hook: ['config.secret'] },
  // A copy of one real repository, refreshed from it and fed by its webhooks (root/README.md).
  root: githubRoot,
});
