// A chat-ops bot on @octokit/rest, as bots are written: before opening a
// pull request for BRANCH it searches for an open one
// (`is:pr is:open head:BRANCH repo:OWNER/REPO`), opens it only when there
// is none, then answers the comments of issue ISSUE that mention it
// (`@BOT`) with an `eyes` reaction, once. FORGEAPI_URL is the REST base
// (.../api/v3), FORGEAPI_TOKEN the bot's token. It prints {"ready":true},
// runs twice (the second run must find its pull request and its
// reactions), and prints one JSON summary line.
import { Octokit } from "@octokit/rest";

const { FORGEAPI_URL: baseUrl, FORGEAPI_TOKEN: auth, OWNER: owner, REPO: repo, BRANCH: branch, BOT: bot } = process.env;
const issueNumber = Number(process.env.ISSUE);
const octokit = new Octokit({ baseUrl, auth });
console.log(JSON.stringify({ ready: true }));

async function run() {
  const q = `is:pr is:open head:${branch} repo:${owner}/${repo}`;
  const { data: found } = await octokit.rest.search.issuesAndPullRequests({ q });
  let opened = null;
  if (found.total_count === 0) {
    const { data: pr } = await octokit.rest.pulls.create({ owner, repo, head: branch, base: "main", title: `Update from ${branch}` });
    opened = pr.number;
  }
  const comments = await octokit.paginate(octokit.rest.issues.listComments, { owner, repo, issue_number: issueNumber, per_page: 2 });
  const statuses = [];
  for (const c of comments) {
    if (!c.body.includes(`@${bot}`)) continue;
    const { status } = await octokit.rest.reactions.createForIssueComment({ owner, repo, comment_id: c.id, content: "eyes" });
    statuses.push(status);
  }
  return { found: found.total_count, opened, statuses };
}

const summary = {};
try {
  summary.first = await run();
  summary.second = await run();
} catch (err) {
  summary.error = `${err.status ?? ""} ${err.message}`;
}
console.log(JSON.stringify(summary));
