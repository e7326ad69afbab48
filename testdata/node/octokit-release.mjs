// octokit-release.mjs publishes a release as semantic-release's GitHub
// plugin does, with @octokit/rest: a draft release of a new tag, an asset
// uploaded at the release's upload_url (octokit expands its {?name,label}
// template), the release published, then read back: the latest release,
// the release by tag, its assets, and the asset's bytes through the asset
// API (Accept: application/octet-stream, the 302 followed by fetch). It
// prints one JSON summary line; the Go test
// (internal/releases/octokit_test.go) starts the server, runs this script
// and checks the summary.
//
// Environment: FORGEAPI_URL (the API base URL, https://HOST/api/v3),
// FORGEAPI_TOKEN, OWNER, REPO, TAG.
import { createHash } from "node:crypto";
import { Octokit } from "@octokit/rest";

const { FORGEAPI_URL, FORGEAPI_TOKEN, OWNER: owner, REPO: repo, TAG: tag } = process.env;
const octokit = new Octokit({ baseUrl: FORGEAPI_URL, auth: FORGEAPI_TOKEN, log: { debug() {}, info() {}, warn() {}, error() {} } });
const sha256 = (buf) => createHash("sha256").update(buf).digest("hex");

try {
  const asset = Buffer.alloc(300_000, "semantic-release ");
  const { data: draft } = await octokit.rest.repos.createRelease({
    owner, repo, tag_name: tag, target_commitish: "main", name: tag, body: "* feat: the first feature", draft: true,
  });
  const { data: uploaded } = await octokit.rest.repos.uploadReleaseAsset({
    url: draft.upload_url, data: asset, name: "dist.tgz", label: "Distribution",
    headers: { "content-type": "application/gzip", "content-length": asset.length },
  });
  const { data: published } = await octokit.rest.repos.updateRelease({ owner, repo, release_id: draft.id, draft: false });
  const { data: latest } = await octokit.rest.repos.getLatestRelease({ owner, repo });
  const { data: byTag } = await octokit.rest.repos.getReleaseByTag({ owner, repo, tag });
  const { data: assets } = await octokit.rest.repos.listReleaseAssets({ owner, repo, release_id: draft.id });
  const download = await octokit.rest.repos.getReleaseAsset({
    owner, repo, asset_id: uploaded.id, headers: { accept: "application/octet-stream" },
  });
  console.log(JSON.stringify({
    draft: draft.draft,
    published: !published.draft && published.published_at !== null,
    latest: latest.tag_name,
    byTag: byTag.id === draft.id,
    asset: { name: uploaded.name, label: uploaded.label, size: uploaded.size, contentType: uploaded.content_type, digest: uploaded.digest },
    assets: assets.map((a) => a.name),
    downloaded: sha256(Buffer.from(download.data)),
    uploadedSHA: sha256(asset),
  }));
} catch (e) {
  console.log(JSON.stringify({ error: `${e.status ?? ""} ${e.message}` }));
}
