import { Eta } from 'eta';

/**
 * The status pages' templates (Eta, see the README for why). `<%= %>` escapes (autoEscape is
 * on); `<%~ %>` writes raw and is used only for SVG drawn by chart.ts, which escapes its texts.
 * Kept in this module rather than in .eta files so that the build (tsc) carries them to dist/.
 */
const LAYOUT = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<% if (it.refresh) { %><meta http-equiv="refresh" content="<%= it.refresh %>">
<% } %><link rel="icon" href="/favicon.ico">
<title><%= it.title %> · Workflow test status</title>
<style>
:root { color-scheme: light; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; background: #ffffff; }
header { background: #24292f; color: #ffffff; padding: 12px 24px; display: flex; justify-content: space-between; align-items: baseline; flex-wrap: wrap; gap: 8px; }
header a { color: #ffffff; }
header .brand { font-weight: 600; font-size: 18px; margin: 0; }
header .who { margin: 0; font-size: 14px; }
header form { display: inline; }
button.link { font: inherit; color: #ffffff; background: none; border: 0; padding: 0; text-decoration: underline; cursor: pointer; }
form.sign-in { max-width: 360px; }
form.sign-in label { display: block; font-weight: 600; margin: 12px 0 4px; }
form.sign-in input { box-sizing: border-box; width: 100%; font: inherit; padding: 8px 10px; border: 1px solid #57606a; border-radius: 6px; }
form.run { margin: 6px 0 0; }
form.run button { font: inherit; font-size: 14px; font-weight: 600; padding: 4px 12px; color: #ffffff; background: #1a7f37; border: 1px solid #116329; border-radius: 6px; cursor: pointer; }
ul.providers { list-style: none; padding: 0; margin: 8px 0; display: flex; flex-direction: column; gap: 8px; max-width: 360px; }
a.provider { display: block; text-align: center; font-weight: 600; padding: 8px 20px; color: #1f2328; background: #f6f8fa; border: 1px solid #57606a; border-radius: 6px; text-decoration: none; }
form.sign-in button { margin-top: 16px; font: inherit; font-weight: 600; padding: 8px 20px; color: #ffffff; background: #1a7f37; border: 1px solid #116329; border-radius: 6px; cursor: pointer; }
form.sign-in textarea { box-sizing: border-box; width: 100%; font: inherit; padding: 8px 10px; border: 1px solid #57606a; border-radius: 6px; }
form.sign-in label.check { font-weight: 400; }
form.sign-in label.check input { width: auto; margin-right: 6px; }
form.consent button { margin: 8px 12px 0 0; font: inherit; font-weight: 600; padding: 8px 20px; border-radius: 6px; cursor: pointer; }
form.consent button.approve { color: #ffffff; background: #1a7f37; border: 1px solid #116329; }
form.consent button.deny, form.inline button { color: #1f2328; background: #f6f8fa; border: 1px solid #8c959f; }
form.inline { display: inline; }
form.inline button { font: inherit; font-size: 14px; padding: 2px 10px; border-radius: 6px; cursor: pointer; }
ul.scopes li { margin: 6px 0; }
/* A scope name is one word to its reader (user.workflow.read): a narrow column breaks between names, never inside one. */
code.scope { white-space: nowrap; overflow-wrap: normal; }
.secret { font-weight: 600; background: #fff8c5; padding: 2px 4px; }
.problem { color: #a40e26; font-weight: 600; }
main { padding: 16px 24px 40px; max-width: 1180px; }
h1 { font-size: 28px; margin: 8px 0 4px; }
h2 { font-size: 20px; margin: 28px 0 8px; }
h3 { font-size: 17px; margin: 20px 0 6px; }
a { color: #0550ae; }
.summary { font-size: 18px; margin: 4px 0 16px; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { text-align: left; padding: 8px 10px; border-bottom: 1px solid #d0d7de; vertical-align: middle; }
thead th { font-size: 14px; color: #424a53; border-bottom: 2px solid #8c959f; }
tbody th { font-weight: 600; }
.state { font-weight: 600; white-space: nowrap; }
.state::before { content: "●"; margin-right: 6px; }
.all_passing, .passed { color: #1a7f37; }
.some_passing { color: #7d4e00; }
.all_failing, .failed, .error, .aborted { color: #cf222e; }
.not_available, .running, .waiting { color: #57606a; }
.tag { display: inline-block; font-size: 12px; font-weight: 600; padding: 0 8px; border-radius: 10px; border: 1px solid #57606a; color: #424a53; margin-left: 6px; vertical-align: middle; }
.stale { color: #7d4e00; font-weight: 600; }
.check-failed { color: #a40e26; }
.muted { color: #57606a; }
.severity { display: inline-block; font-size: 12px; font-weight: 700; text-transform: uppercase; letter-spacing: 0.5px; padding: 1px 6px; border-radius: 4px; color: #ffffff; vertical-align: middle; }
.severity.error-issue { background: #cf222e; }
.severity.warning-issue { background: #7d4e00; }
ul.issues { list-style: none; padding: 0; margin: 8px 0; }
ul.issues li { padding: 8px 0; border-bottom: 1px solid #d0d7de; }
ul.issues .what { display: block; margin-top: 2px; }
code { font: 14px ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap: anywhere; }
.counts { white-space: nowrap; }
nav.pages { display: flex; gap: 16px; margin-top: 16px; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.facts { display: flex; flex-wrap: wrap; gap: 8px 32px; margin: 8px 0 0; padding: 0; list-style: none; }
.legend { font-size: 14px; color: #424a53; }
.legend span::before { content: "■"; margin-right: 4px; }
.legend .passed::before { color: #1a7f37; }
.legend .failed::before { color: #cf222e; }
svg.chart { max-width: 100%; height: auto; }
a, th, td, h1, h3 { overflow-wrap: break-word; }
.previous { font-size: 16px; color: #424a53; }
body.wall main { max-width: none; }
.tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 320px), 1fr)); gap: 16px; margin: 0; padding: 0; list-style: none; }
.tile { color: #1f2328; border: 1px solid #d0d7de; border-left: 12px solid #57606a; border-radius: 6px; padding: 12px 16px; }
.tile.all_failing { border-left-color: #cf222e; }
.tile.some_passing { border-left-color: #9a6700; }
.tile.all_passing { border-left-color: #1a7f37; }
.tile h2 { font-size: 22px; margin: 0 0 4px; }
.tile .state { font-size: 20px; }
.tile p { margin: 4px 0; }
/* Phones (360–390 px wide): no table wider than the screen; each row becomes a block of its cells, named by data-label. */
@media (max-width: 640px) {
  header { padding: 10px 12px; }
  main { padding: 12px 12px 32px; }
  h1 { font-size: 24px; }
  table.stack, table.stack tbody, table.stack tr, table.stack th, table.stack td { display: block; width: auto; }
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
  table.stack tr { border-bottom: 1px solid #d0d7de; padding: 8px 0; }
  table.stack th, table.stack td { border: 0; padding: 2px 0; }
  a, th, td, h1, h3 { overflow-wrap: anywhere; }
  table.stack td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; color: #424a53; }
}
</style>
</head>
<body<% if (it.wall) { %> class="wall"<% } %>>
<header>
<p class="brand"><a href="/status">Workflow test status</a></p>
<div class="who"><% if (it.viewer) { %>Signed in as <strong><bdi><%= it.viewer %></bdi></strong> · <a href="/status/account">Your account</a> · <form method="post" action="/status/sign-out"><button type="submit" class="link">Sign out</button></form><% } else { %>Public workflows (not signed in) · <a href="/status/sign-in<%= it.here ? '?next=' + encodeURIComponent(it.here) : '' %>">Sign in</a><% } %> · <a href="/docs">API</a></div>
</header>
<main>
<%~ it.body %>
</main>
</body>
</html>
`;

const OVERVIEW = `<% layout('@layout', { title: 'Workflows', viewer: it.viewer, here: it.here, refresh: it.refresh }) %>
<h1>Workflows</h1>
<% if (it.rows.length === 0) { %>
<p class="summary">No workflows to show<% if (it.page > 1) { %> on this page<% } %>.</p>
<% } else { %>
<p class="summary"><%= it.summary %></p>
<table class="stack">
<caption class="visually-hidden">Workflows with their test status, newest first</caption>
<thead><tr><th scope="col">Workflow</th><th scope="col">Status</th><th scope="col">Badge</th><th scope="col">Latest version</th><th scope="col">Last check</th><th scope="col">Last 30 days</th></tr></thead>
<tbody>
<% it.rows.forEach(function (row) { %>
<tr>
<th scope="row"><a href="/status/<%= row.uuid %>"><bdi><%= row.name %></bdi></a><% if (!row.public) { %> <span class="tag">private</span><% } %></th>
<td data-label="Status"><span class="state <%= row.aggregate %>"><%= row.message %></span><% if (row.stale) { %> <span class="stale">(stale)</span><% } %></td>
<td data-label="Badge"><img src="/workflows/<%= row.uuid %>/badge.svg" alt="tests: <%= row.message %><%= row.stale ? ' (stale)' : '' %>" height="20"></td>
<td data-label="Latest version"><bdi><%= row.version %></bdi></td>
<td data-label="Last check"><% if (row.lastChecked) { %><time datetime="<%= row.lastChecked.iso %>"><%= row.lastChecked.text %></time><% } else { %><span class="muted">never</span><% } %></td>
<td data-label="Last 30 days"><%~ row.strip %><span class="visually-hidden"><%= row.stripText %></span></td>
</tr>
<% }) %>
</tbody>
</table>
<% } %>
<% if (it.newer || it.older) { %>
<nav class="pages" aria-label="Pages">
<% if (it.newer) { %><a href="<%= it.newer %>" rel="prev">← Newer workflows</a><% } %>
<% if (it.older) { %><a href="<%= it.older %>" rel="next">Older workflows →</a><% } %>
</nav>
<% } %>
`;

const WORKFLOW = `<% layout('@layout', { title: it.title, viewer: it.viewer, here: it.here, refresh: it.refresh }) %>
<p><a href="/status">← All workflows</a></p>
<h1><bdi><%= it.name %></bdi> <span class="tag"><%= it.public ? 'public' : 'private' %></span></h1>
<% if (it.failedChecks.length > 0) { %><p class="summary check-failed"><% it.failedChecks.forEach(function (failed, index) { %><%= index === 0 ? 'The' : '; the' %> last check of <bdi><%= failed.name %></bdi> failed: <%= failed.error %><% }) %></p><% } else { %>
<p class="summary"><span class="state <%= it.aggregate %>"><%= it.message %></span><% if (it.stale) { %> <span class="stale">— stale: <%= it.staleWhy.join('; ') %></span><% } %></p><% } %>
<% if (it.previous) { %><p class="previous">Until it has builds, the version before it: <a href="/status/<%= it.uuid %>?version=<%= encodeURIComponent(it.previous.version) %>"><bdi><%= it.previous.version %></bdi></a> <span class="state <%= it.previous.aggregate %>"><%= it.previous.message %></span><% if (it.previous.stale) { %> <span class="stale">(stale)</span><% } %></p><% } %>
<ul class="facts">
<li>Version <strong><bdi><%= it.version %></bdi></strong><%= it.isLatest ? ' (latest)' : '' %></li>
<li>Last check: <% if (!it.lastCheck) { %><span class="muted">never</span><% } else { %><time datetime="<%= it.lastCheck.iso %>"><%= it.lastCheck.text %></time><% if (!it.lastCheck.ok) { %> <span class="check-failed">(failed)</span><% if (it.lastChecked) { %>, last successful <time datetime="<%= it.lastChecked.iso %>"><%= it.lastChecked.text %></time><% } else { %>, none successful yet<% } %><% } %><% } %></li>
<li><img src="<%= it.badge %>" alt="tests: <%= it.message %><%= it.stale ? ' (stale)' : '' %>" height="20"></li>
</ul>

<h2>Repository checks</h2>
<% if (it.issues.length === 0) { %><p class="muted">The checks found nothing to fix in this version's crate.</p><% } else { %>
<p><%= it.issues.length %> <%= it.issues.length === 1 ? 'issue' : 'issues' %> found in this version's crate when it was registered (<a href="/workflows/issues.html">what each check looks for</a>):</p>
<ul class="issues">
<% it.issues.forEach(function (issue) { %>
<li><span class="severity <%= issue.severity %>-issue"><%= issue.severity %></span> <strong><%= issue.name %></strong> <a href="/workflows/issues.html#<%= issue.id %>"><code><%= issue.id %></code></a><span class="what"><%= issue.description %></span></li>
<% }) %>
</ul>
<% } %>

<h2>Last 30 days</h2>
<%~ it.chart %>
<p class="legend"><span class="passed">passed</span> &nbsp; <span class="failed">failed, error or aborted</span> &nbsp; — <%= it.chartText %></p>

<h2>Test instances and their latest builds</h2>
<% if (it.suites.length === 0) { %><p class="muted">This version has no test suites.</p><% } %>
<% it.suites.forEach(function (suite) { %>
<h3>Suite <bdi><%= suite.name %></bdi></h3>
<table class="stack">
<thead><tr><th scope="col">Instance</th><th scope="col">Service</th><th scope="col">Latest build</th><th scope="col">Started</th><th scope="col">Duration</th><th scope="col">CI run</th><th scope="col">Log</th></tr></thead>
<tbody>
<% suite.instances.forEach(function (instance) { %>
<tr>
<th scope="row"><bdi><%= instance.name %></bdi></th>
<td data-label="Service"><% if (instance.resourceUrl) { %><a href="<%= instance.resourceUrl %>"><%= instance.service %>: <%= instance.resource %></a><% } else if (instance.resource) { %><%= instance.service %>: <%= instance.resource %><% } else { %><%= instance.service %>: <span class="muted">no resource</span><% } %>
<% if (!instance.never) { %><br><% if (!instance.lastCheck) { %><span class="muted">not checked yet</span><% } else if (instance.lastCheck.ok) { %><span class="muted">checked <time datetime="<%= instance.lastCheck.iso %>"><%= instance.lastCheck.text %></time></span><% } else { %><span class="check-failed">check failed <time datetime="<%= instance.lastCheck.iso %>"><%= instance.lastCheck.text %></time>: <%= instance.lastCheck.error %></span><% } %><% } %>
<% if (instance.run) { %><form method="post" action="<%= instance.run %>" class="run"><button type="submit">Run tests now</button></form><% } %></td>
<% if (instance.never) { %>
<td colspan="5" data-label="Latest build"><span class="severity error-issue">never checked</span> <%= instance.never %></td>
<% } else if (instance.build) { %>
<td data-label="Latest build"><span class="state <%= instance.build.status %>"><%= instance.build.status %></span><% if (instance.build.failure) { %> <span class="failure" title="<%= instance.build.failure.evidence %>"><%= instance.build.failure.class %>: <%= instance.build.failure.reason %></span><% } %><% if (instance.build.cancel) { %><form method="post" action="<%= instance.build.cancel %>" class="run"><button type="submit">Cancel</button></form><% } %></td>
<td data-label="Started"><time datetime="<%= instance.build.started.iso %>"><%= instance.build.started.text %></time></td>
<td data-label="Duration"><%= instance.build.duration %></td>
<td data-label="CI run"><% if (instance.build.url) { %><a href="<%= instance.build.url %>">Build <%= instance.build.id %></a><% } else { %>Build <%= instance.build.id %><% } %></td>
<td data-label="Log"><a href="<%= instance.build.log %>">Log<span class="visually-hidden"> of build <%= instance.build.id %></span></a><% if (instance.build.changes) { %><br><a href="<%= instance.build.changes %>">What changed<span class="visually-hidden"> since the last passing build before build <%= instance.build.id %></span></a><% } %></td>
<% } else { %>
<td colspan="5" class="muted">No builds yet</td>
<% } %>
</tr>
<% }) %>
</tbody>
</table>
<% }) %>

<h2>Versions</h2>
<ul>
<% it.versions.forEach(function (version) { %>
<li><% if (version.current) { %><strong><bdi><%= version.version %></bdi></strong> (shown)<% } else { %><a href="/status/<%= it.uuid %>?version=<%= encodeURIComponent(version.version) %>"><bdi><%= version.version %></bdi></a><% } %> — registered <time datetime="<%= version.registered.iso %>"><%= version.registered.text %></time></li>
<% }) %>
</ul>
<% if (it.follow) { %>

<h2>Following <a href="<%= it.follow.url %>"><%= it.follow.repository %></a></h2>
<% if (it.follow.tags.length === 0 && it.follow.branches.length === 0) { %><p class="muted">New tags and pushes register no versions: the workflow follows no tag or branch.</p><% } else { %>
<p>New versions from <% if (it.follow.tags.length > 0) { %>tags <% it.follow.tags.forEach(function (glob, i) { %><%= i > 0 ? ', ' : '' %><code><%= glob %></code><% }) %><% } %><% if (it.follow.tags.length > 0 && it.follow.branches.length > 0) { %> and <% } %><% if (it.follow.branches.length > 0) { %>pushes to branches <% it.follow.branches.forEach(function (glob, i) { %><%= i > 0 ? ', ' : '' %><code><%= glob %></code><% }) %><% } %><% if (it.follow.source) { %> (<%= it.follow.source %>)<% } %>.</p>
<% } %>
<% if (it.follow.lastPoll && it.follow.lastPoll.error) { %><p class="problem">The last look at the repository, <time datetime="<%= it.follow.lastPoll.at.iso %>"><%= it.follow.lastPoll.at.text %></time>, failed: <%= it.follow.lastPoll.error %></p><% } %>
<% if (it.follow.refs.length > 0) { %>
<table>
<thead><tr><th scope="col">Tag or branch</th><th scope="col">Outcome</th><th scope="col">When</th></tr></thead>
<tbody>
<% it.follow.refs.forEach(function (ref) { %>
<tr>
<th scope="row"><%= ref.kind %> <%= ref.name %></th>
<td><% if (ref.state === 'registered') { %>version <%= ref.version %> registered<% } else if (ref.state === 'failed') { %><span class="problem">not registered:</span> <%= ref.reason %><% } else if (ref.state === 'ignored') { %>ignored: <%= ref.reason %><% } else { %>to be registered<% if (ref.reason) { %> (last attempt: <%= ref.reason %>)<% } %><% } %></td>
<td><time datetime="<%= ref.at.iso %>"><%= ref.at.text %></time></td>
</tr>
<% }) %>
</tbody>
</table>
<% } %>
<% } %>
`;

const WALL = `<% layout('@layout', { title: 'Wall', viewer: it.viewer, here: it.here, refresh: it.refresh, wall: true }) %>
<h1>Workflows, failing first</h1>
<% if (it.tiles.length === 0) { %>
<p class="summary">No workflows to show.</p>
<% } else { %>
<p class="summary"><%= it.summary %><% if (it.refresh) { %> · refreshed every <%= it.refresh %> s<% } %></p>
<ul class="tiles">
<% it.tiles.forEach(function (tile) { %>
<li class="tile <%= tile.aggregate %>">
<h2><a href="/status/<%= tile.uuid %>"><bdi><%= tile.name %></bdi></a></h2>
<p><span class="state <%= tile.aggregate %>"><%= tile.message %></span><% if (tile.stale) { %> <span class="stale">(stale)</span><% } %></p>
<p>Version <bdi><%= tile.version %></bdi> · last check <% if (tile.lastChecked) { %><time datetime="<%= tile.lastChecked.iso %>"><%= tile.lastChecked.text %></time><% } else { %><span class="muted">never</span><% } %></p>
<p><%~ tile.strip %><span class="visually-hidden"><%= tile.stripText %></span></p>
</li>
<% }) %>
</ul>
<% if (it.more > 0) { %><p class="muted"><%= it.more %> more workflows are on <a href="/status">the list</a>.</p><% } %>
<% } %>
`;

/** API.md 16 for a person: what differs between a build and its instance's last passing build before it. */
const CHANGES = `<% layout('@layout', { title: it.title, viewer: it.viewer, here: it.here }) %>
<p><a href="<%= it.back %>">← <bdi><%= it.workflow %></bdi></a></p>
<h1>What changed before build <%= it.build.id %></h1>
<p class="summary">Instance <strong><bdi><%= it.instance %></bdi></strong> (<%= it.service %>) of <bdi><%= it.workflow %></bdi><% if (it.version) { %>, version <bdi><%= it.version %></bdi><% } %>: <span class="state <%= it.build.status %>"><%= it.build.status %></span></p>
<% if (!it.lastPassing) { %><p class="summary">No passing build before this one: nothing to compare it with.</p><% } %>

<h2>Builds</h2>
<table class="stack">
<thead><tr><th scope="col">Build</th><th scope="col">State</th><th scope="col">Started</th><th scope="col">Duration</th><th scope="col">Commit</th><th scope="col">Log</th></tr></thead>
<tbody>
<% [['This build', it.build], ['Last passing build', it.lastPassing]].forEach(function (row) { var b = row[1]; if (!b) { return; } %>
<tr>
<th scope="row"><%= row[0] %>: <% if (b.url) { %><a href="<%= b.url %>">build <%= b.id %></a><% } else { %>build <%= b.id %><% } %></th>
<td data-label="State"><span class="state <%= b.status %>"><%= b.status %></span></td>
<td data-label="Started"><time datetime="<%= b.started.iso %>"><%= b.started.text %></time></td>
<td data-label="Duration"><%= b.duration %></td>
<td data-label="Commit"><% if (b.commit) { %><code><%= b.commit %></code><% } else { %><span class="muted">not known</span><% } %></td>
<td data-label="Log"><a href="<%= b.log %>">Log<span class="visually-hidden"> of build <%= b.id %></span></a></td>
</tr>
<% }) %>
</tbody>
</table>
<% if (it.lastPassing) { %>
<p>Commits: <% if (it.compare) { %><a href="<%= it.compare %>">compare <code><%= it.lastPassing.commit %></code>…<code><%= it.build.commit %></code></a><% } else if (it.lastPassing.commit && it.build.commit && it.lastPassing.commit === it.build.commit) { %>the same commit, <code><%= it.build.commit %></code><% } else { %><span class="muted">no comparison: the CI service did not name both commits or the repository</span><% } %></p>
<% } %>

<h2>Runner</h2>
<table class="stack">
<thead><tr><th scope="col"><span class="visually-hidden">What</span></th><% if (it.lastPassing) { %><th scope="col">Last passing build</th><% } %><th scope="col">This build</th></tr></thead>
<tbody>
<% it.runner.forEach(function (field) { %>
<tr>
<th scope="row"><%= field.label %><% if (field.before && field.after && field.before !== field.after) { %> <span class="tag">changed</span><% } %></th>
<% if (it.lastPassing) { %><td data-label="Last passing build"><% if (field.before) { %><%= field.before %><% } else { %><span class="muted">not known</span><% } %></td><% } %>
<td data-label="This build"><% if (field.after) { %><%= field.after %><% } else { %><span class="muted">not known</span><% } %></td>
</tr>
<% }) %>
</tbody>
</table>

<h2>Failed jobs</h2>
<% if (it.failedJobs.length === 0) { %><p class="muted">The CI service named no job of this build that did not pass.</p><% } else { %>
<ul>
<% it.failedJobs.forEach(function (job) { %><li><% if (job.url) { %><a href="<%= job.url %>"><bdi><%= job.name %></bdi></a><% } else { %><bdi><%= job.name %></bdi><% } %><% if (job.conclusion) { %> <span class="state failed"><%= job.conclusion %></span><% } %></li>
<% }) %></ul>
<% } %>

<h2>Failed steps</h2>
<% if (it.failedSteps.length === 0) { %><p class="muted">The CI service named no step that did not pass.</p><% } else { %>
<ul>
<% it.failedSteps.forEach(function (step) { %><li><bdi><%= step.job %></bdi> › <strong><bdi><%= step.name %></bdi></strong><% if (step.conclusion) { %> <span class="state failed"><%= step.conclusion %></span><% } %></li>
<% }) %></ul>
<% } %>
<p class="muted">The same as JSON: <a href="<%= it.json %>"><code><%= it.json %></code></a></p>
`;

const SIGN_IN = `<% layout('@layout', { title: 'Sign in' }) %>
<h1>Sign in</h1>
<p>Signed in, you see your private workflows beside the public ones.</p>
<% if (it.error) { %><p class="problem" role="alert"><%= it.error %></p><% } %>
<form class="sign-in" method="post" action="/status/sign-in">
<input type="hidden" name="next" value="<%= it.next %>">
<label for="username">Username</label>
<input id="username" name="username" autocomplete="username" required maxlength="256" value="<%= it.username %>" autocapitalize="none" spellcheck="false">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="256">
<button type="submit">Sign in</button>
</form>
<% if (it.providers && it.providers.length > 0) { %>
<h2>Or sign in with the account you have elsewhere</h2>
<ul class="providers">
<% it.providers.forEach(function (provider) { %><li><a class="provider" href="/oauth2/login/<%= encodeURIComponent(provider.name) %>?next=<%= encodeURIComponent(it.next) %>">Sign in with <bdi><%= provider.label %></bdi></a></li>
<% }) %></ul>
<% } %>
`;

/**
 * A signed-in person's account page (API.md 15): a heading, then its sections, each rendered by
 * its own template (the ways to sign in, the applications a person registered).
 */
const ACCOUNT = `<% layout('@layout', { title: 'Your account', viewer: it.viewer, here: '/status/account' }) %>
<h1>Your account</h1>
<p class="summary">Signed in as <strong><bdi><%= it.viewer %></bdi></strong> (<%= it.roles.join(', ') %>).</p>
<% it.sections.forEach(function (section) { %><%~ section %>
<% }) %>`;

const ACCOUNT_IDENTITIES = `<section aria-labelledby="identities">
<h2 id="identities">Ways to sign in</h2>
<p><%= it.password ? 'Your username and password, and the accounts below.' : 'The accounts below (this account has no password).' %></p>
<% if (it.identities.length === 0) { %><p class="muted">No account elsewhere is linked.</p><% } else { %>
<table class="stack">
<caption class="visually-hidden">Accounts elsewhere linked to this one</caption>
<thead><tr><th scope="col">Provider</th><th scope="col">Name there</th><th scope="col">E-mail</th><th scope="col">Linked</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Unlink</span></th></tr></thead>
<tbody>
<% it.identities.forEach(function (identity) { %>
<tr>
<th scope="row"><bdi><%= identity.label %></bdi></th>
<td data-label="Name there"><bdi><%= identity.username || identity.subject %></bdi></td>
<td data-label="E-mail"><% if (identity.email) { %><bdi><%= identity.email %></bdi><% } else { %><span class="muted">none</span><% } %></td>
<td data-label="Linked"><time datetime="<%= identity.linked.iso %>"><%= identity.linked.text %></time></td>
<td data-label="Last used"><% if (identity.used) { %><time datetime="<%= identity.used.iso %>"><%= identity.used.text %></time><% } else { %><span class="muted">never</span><% } %></td>
<td><% if (identity.unlink) { %><form method="post" action="<%= identity.unlink %>" class="run"><button type="submit">Unlink<span class="visually-hidden"> <%= identity.label %></span></button></form><% } else { %><span class="muted">your only way in</span><% } %></td>
</tr>
<% }) %>
</tbody>
</table>
<% } %>
<% if (it.linkable.length > 0) { %>
<p>Link another account:</p>
<ul class="providers">
<% it.linkable.forEach(function (provider) { %><li><a class="provider" href="/oauth2/login/<%= encodeURIComponent(provider.name) %>?link=true&amp;next=%2Fstatus%2Faccount">Link <bdi><%= provider.label %></bdi></a></li>
<% }) %></ul>
<% } %>
</section>
`;

const CONSENT = `<% layout('@layout', { title: 'Let an application act for you', viewer: it.viewer }) %>
<h1>Let <bdi><%= it.client %></bdi> act for you?</h1>
<p class="summary">The application <strong><bdi><%= it.client %></bdi></strong>, registered here by <bdi><%= it.owner %></bdi>, asks to act for you, <strong><bdi><%= it.viewer %></bdi></strong>, and to:</p>
<ul class="scopes">
<% it.scopes.forEach(function (scope) { %><li><%= scope.description %> <code><%= scope.name %></code></li>
<% }) %></ul>
<p>It never gets your password, and never acts as an administrator. Approving sends you back to <code><%= it.redirectUri %></code>.</p>
<form class="consent" method="post" action="/oauth2/authorize">
<% it.fields.forEach(function (field) { %><input type="hidden" name="<%= field.name %>" value="<%= field.value %>">
<% }) %><button type="submit" name="decision" value="approve" class="approve">Approve</button><button type="submit" name="decision" value="deny" class="deny">Deny</button>
</form>
`;

const ACCOUNT_CLIENTS = `<section id="applications">
<h2>Applications you registered</h2>
<p>An application you register here can ask people to let it act for them (OAuth2's authorization code flow with PKCE; <a href="/.well-known/oauth-authorization-server">this server's metadata</a>). Deleting one revokes every token it holds.</p>
<% if (it.clients.length === 0) { %><p class="muted">You have registered no application.</p><% } else { %>
<table class="stack">
<caption class="visually-hidden">Applications you registered</caption>
<thead><tr><th scope="col">Application</th><th scope="col">Client id</th><th scope="col">Type</th><th scope="col">Redirect URIs</th><th scope="col">Registered</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>
<% it.clients.forEach(function (client) { %>
<tr>
<th scope="row"><bdi><%= client.name %></bdi></th>
<td data-label="Client id"><code><%= client.clientId %></code></td>
<td data-label="Type"><%= client.confidential ? 'confidential' : 'public' %></td>
<td data-label="Redirect URIs"><% client.redirectUris.forEach(function (uri, i) { %><%~ i > 0 ? '<br>' : '' %><code><%= uri %></code><% }) %></td>
<td data-label="Registered"><time datetime="<%= client.registered.iso %>"><%= client.registered.text %></time></td>
<td><form class="inline" method="post" action="/status/account/clients/<%= client.clientId %>/delete"><button type="submit">Delete<span class="visually-hidden"> <%= client.name %></span></button></form></td>
</tr>
<% }) %>
</tbody>
</table>
<% } %>
<h3>Register an application</h3>
<form class="sign-in" method="post" action="/status/account/clients">
<label for="client-name">Name</label>
<input id="client-name" name="name" required maxlength="128">
<label for="client-redirect-uris">Redirect URIs, one per line</label>
<textarea id="client-redirect-uris" name="redirect_uris" required rows="3"></textarea>
<label class="check"><input type="checkbox" name="confidential" value="true" checked>Confidential: a server that keeps a client secret</label>
<button type="submit">Register</button>
</form>
</section>
`;

const ACCOUNT_APPROVALS = `<section id="authorizations">
<h2>Applications you let act for you</h2>
<p>What you approved on a consent page. Revoking stops the application's tokens at once; it can ask you again.</p>
<% if (it.approvals.length === 0) { %><p class="muted">You have let no application act for you.</p><% } else { %>
<table class="stack">
<caption class="visually-hidden">Applications you let act for you</caption>
<thead><tr><th scope="col">Application</th><th scope="col">Client id</th><th scope="col">May</th><th scope="col">Approved</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Revoke</span></th></tr></thead>
<tbody>
<% it.approvals.forEach(function (approval) { %>
<tr>
<th scope="row"><bdi><%= approval.name %></bdi></th>
<td data-label="Client id"><code><%= approval.clientId %></code></td>
<td data-label="May"><% approval.scopes.forEach(function (scope, i) { %><%~ i > 0 ? '<br>' : '' %><code class="scope"><%= scope %></code><% }) %></td>
<td data-label="Approved"><time datetime="<%= approval.granted.iso %>"><%= approval.granted.text %></time></td>
<td data-label="Last used"><% if (approval.used) { %><time datetime="<%= approval.used.iso %>"><%= approval.used.text %></time><% } else { %><span class="muted">never</span><% } %></td>
<td><form class="inline" method="post" action="/status/account/authorizations/<%= approval.clientId %>/revoke"><button type="submit">Revoke<span class="visually-hidden"> <%= approval.name %></span></button></form></td>
</tr>
<% }) %>
</tbody>
</table>
<% } %>
</section>
`;

const CLIENT_CREATED = `<% layout('@layout', { title: 'Application registered', viewer: it.viewer }) %>
<h1>Application <bdi><%= it.name %></bdi> registered</h1>
<p>Its client id: <code><%= it.clientId %></code></p>
<% if (it.clientSecret) { %><p>Its client secret, shown this once (only a hash is kept): <code class="secret"><%= it.clientSecret %></code></p><% } else { %><p>A public client has no secret: it proves each code with PKCE.</p><% } %>
<p><a href="/status/account#applications">Back to your account</a></p>
`;

const ISSUE_TYPES = `<% layout('@layout', { title: 'Repository checks', viewer: it.viewer, here: it.here }) %>
<% if (it.back) { %><p><a href="<%= it.back %>">← Back</a></p><% } %>
<h1>Repository checks</h1>
<p class="summary">What the service checks in the crate of every version it registers, and in the repository of a GitHub link: <%= it.types.length %> types of issue. A version's issues are in its replies (<code>version.issues</code>) and on its status page; a <code>.lifemonitor.yaml</code> leaves types out with <code>issues.exclude</code>, by identifier. The same list as JSON: <a href="/workflows/issues">/workflows/issues</a>.</p>
<table class="stack">
<caption class="visually-hidden">Types of issue the repository checks report</caption>
<thead><tr><th scope="col">Issue</th><th scope="col">Severity</th><th scope="col">What it means</th><th scope="col">Labels</th></tr></thead>
<tbody>
<% it.types.forEach(function (type) { %>
<tr id="<%= type.identifier %>">
<th scope="row"><%= type.name %><br><code><%= type.identifier %></code></th>
<td data-label="Severity"><span class="severity <%= type.severity %>-issue"><%= type.severity %></span></td>
<td data-label="What it means"><%= type.description %><% if (type.depends_on.length > 0) { %> <span class="muted">Checked after <%= type.depends_on.join(', ') %>.</span><% } %></td>
<td data-label="Labels"><%= type.labels.join(', ') %></td>
</tr>
<% }) %>
</tbody>
</table>
`;

const UNSUBSCRIBE = `<% layout('@layout', { title: it.title }) %>
<h1><%= it.title %></h1>
<% if (it.state === 'done') { %>
<p class="summary" role="status">Done: <%= it.what %> no longer come<%= it.address ? ' to ' : '' %><% if (it.address) { %><strong><%= it.address %></strong><% } %>.</p>
<% } else if (it.state === 'inactive') { %>
<p class="summary">Nothing to do: <%= it.what %> no longer come<%= it.address ? ' to ' : '' %><% if (it.address) { %><strong><%= it.address %></strong><% } %>.</p>
<% } else { %>
<p class="summary">Stop <%= it.what %><%= it.address ? ' to ' : '' %><% if (it.address) { %><strong><%= it.address %></strong><% } %>?</p>
<p><%= it.effect %></p>
<form class="sign-in" method="post" action="/unsubscribe/<%= it.token %>">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">Unsubscribe</button>
</form>
<p class="muted">Nothing changes until you press the button.</p>
<% } %>
<% if (it.workflow) { %><p><a href="/status/<%= it.workflow %>">The workflow's status page</a></p><% } %>
`;

const ERROR = `<% layout('@layout', { title: it.title, viewer: it.viewer, here: it.here }) %>
<h1><%= it.title %></h1>
<% if (it.form) { %><p><strong><%= it.form.refused %></strong></p><% } %>
<p><%= it.message %></p>
<% if (it.retry) { %><p><%= it.retry.lead %> <time datetime="<%= it.retry.iso %>"><%= it.retry.text %></time>.</p><% } %>
<% if (it.form) { %><p><a href="<%= it.form.href %>"><%= it.form.label %></a></p><% } %>
<% if (it.expired) { %><form method="post" action="/status/sign-out"><button type="submit">Forget the session</button></form><% } %>
<p><a href="/status">See the workflows you may see</a></p>
`;

/**
 * The end of a sign-in through a provider (API.md 15.1): the provider's redirect back is a
 * cross-site chain, along which browsers send no SameSite=Strict cookie, so the session would be
 * missing on `next`; moving on from this page of ours is a same-site navigation, and no script.
 */
const SIGNED_IN = `<% layout('@layout', { title: it.title, viewer: it.viewer, refresh: '0;url=' + it.next }) %>
<h1><%= it.title %></h1>
<p><a href="<%= it.next %>">Continue</a></p>
`;

export type PageName =
  | 'overview'
  | 'wall'
  | 'workflow'
  | 'changes'
  | 'issue-types'
  | 'sign-in'
  | 'unsubscribe'
  | 'error'
  | 'account'
  | 'account-identities'
  | 'consent'
  | 'account-clients'
  | 'account-approvals'
  | 'client-created'
  | 'signed-in';

const engine = new Eta({ autoEscape: true, cache: true });
engine.loadTemplate('@layout', LAYOUT);
engine.loadTemplate('@overview', OVERVIEW);
engine.loadTemplate('@wall', WALL);
engine.loadTemplate('@workflow', WORKFLOW);
engine.loadTemplate('@changes', CHANGES);
engine.loadTemplate('@issue-types', ISSUE_TYPES);
engine.loadTemplate('@sign-in', SIGN_IN);
engine.loadTemplate('@unsubscribe', UNSUBSCRIBE);
engine.loadTemplate('@error', ERROR);
engine.loadTemplate('@account', ACCOUNT);
engine.loadTemplate('@account-identities', ACCOUNT_IDENTITIES);
engine.loadTemplate('@consent', CONSENT);
engine.loadTemplate('@account-clients', ACCOUNT_CLIENTS);
engine.loadTemplate('@account-approvals', ACCOUNT_APPROVALS);
engine.loadTemplate('@client-created', CLIENT_CREATED);
engine.loadTemplate('@signed-in', SIGNED_IN);

export function renderPage(name: PageName, data: object): string {
  return engine.render(`@${name}`, data);
}
