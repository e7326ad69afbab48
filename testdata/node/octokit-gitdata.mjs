// octokit-gitdata.mjs commits to a forgeapi server without a clone, as
// release-please does with @octokit/rest: it reads the default branch's
// head and its tree (recursively, by the branch's name), writes a blob
// (base64) and a tree on the head's tree with one entry by sha and one by
// content, a commit whose parent is the head, creates the release branch
// (a name with "/") at it and fast-forwards the default branch, then tags
// the commit with an annotated tag and its reference. It prints one JSON
// summary line; the Go test (internal/gitdata/octokit_test.go) starts the
// server, runs this script and checks the summary against git.
//
// Environment: FORGEAPI_URL (the API base URL, https://HOST/api/v3 as for a
// self-managed server), FORGEAPI_TOKEN, OWNER, REPO.
import { Octokit } from "@octokit/rest";

const { FORGEAPI_URL, FORGEAPI_TOKEN, OWNER: owner, REPO: repo } = process.env;
const octokit = new Octokit({ baseUrl: FORGEAPI_URL, auth: FORGEAPI_TOKEN, log: { debug() {}, info() {}, warn() {}, error() {} } });

const summary = {};
try {
  const { data: repository } = await octokit.rest.repos.get({ owner, repo });
  const branch = repository.default_branch;
  const { data: ref } = await octokit.rest.git.getRef({ owner, repo, ref: `heads/${branch}` });
  const head = ref.object.sha;
  const { data: headCommit } = await octokit.rest.git.getCommit({ owner, repo, commit_sha: head });
  const { data: files } = await octokit.rest.git.getTree({ owner, repo, tree_sha: branch, recursive: "true" });
  summary.files = files.tree.filter((e) => e.type === "blob").map((e) => e.path).sort();
  summary.truncated = files.truncated;

  const changelog = "# Changelog\n\n## 1.0.0 (2025-01-01)\n\n* first release\n";
  const { data: blob } = await octokit.rest.git.createBlob({
    owner, repo, content: Buffer.from(changelog).toString("base64"), encoding: "base64",
  });
  const { data: tree } = await octokit.rest.git.createTree({
    owner, repo, base_tree: headCommit.tree.sha,
    tree: [
      { path: "CHANGELOG.md", mode: "100644", type: "blob", sha: blob.sha },
      { path: ".release-please-manifest.json", mode: "100644", type: "blob", content: '{".":"1.0.0"}\n' },
    ],
  });
  const { data: commit } = await octokit.rest.git.createCommit({
    owner, repo, message: "chore(main): release 1.0.0", tree: tree.sha, parents: [head],
    author: { name: "release-please[bot]", email: "release-please[bot]@users.noreply.example.com", date: "2025-01-01T12:00:00Z" },
  });
  const releaseBranch = "release-please--branches--main/components/app";
  await octokit.rest.git.createRef({ owner, repo, ref: `refs/heads/${releaseBranch}`, sha: commit.sha });
  const { data: moved } = await octokit.rest.git.updateRef({ owner, repo, ref: `heads/${branch}`, sha: commit.sha, force: false });
  const { data: tag } = await octokit.rest.git.createTag({
    owner, repo, tag: "v1.0.0", message: "v1.0.0", object: commit.sha, type: "commit",
    tagger: { name: "release-please[bot]", email: "release-please[bot]@users.noreply.example.com", date: "2025-01-01T12:00:00Z" },
  });
  await octokit.rest.git.createRef({ owner, repo, ref: "refs/tags/v1.0.0", sha: tag.sha });
  const { data: tagBack } = await octokit.rest.git.getTag({ owner, repo, tag_sha: tag.sha });
  const { data: byBranch } = await octokit.rest.git.getTree({ owner, repo, tree_sha: releaseBranch });
  const { data: tags } = await octokit.rest.git.listMatchingRefs({ owner, repo, ref: "tags/" });

  Object.assign(summary, {
    head, blob: blob.sha, tree: tree.sha, commit: commit.sha, commitTree: commit.tree.sha,
    parents: commit.parents.map((p) => p.sha), verification: commit.verification.reason,
    moved: moved.object.sha, tag: tag.sha, tagObject: tagBack.object.sha, tagName: tagBack.tag,
    treeByBranch: byBranch.sha, tagRefs: tags.map((t) => `${t.ref} ${t.object.type}`),
  });
} catch (err) {
  summary.error = `${err.status ?? ""} ${err.message}`;
}
console.log(JSON.stringify(summary));
