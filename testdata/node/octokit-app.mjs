// octokit-app.mjs is a small Probot-style app on octokit.js: it
// authenticates as the app with @octokit/auth-app (a JWT signed with its
// private key), finds its installation on the repository, points the
// app's webhook at its own receiver (PATCH /app/hook/config), and on push,
// received with @octokit/webhooks verifyAndReceive, mints an installation
// token and sets a commit status on the pushed commit with it.
//
// It prints {"ready": true} once its receiver listens and the webhook
// points at it (the Go test, internal/apps/octokit_test.go, then pushes),
// and one JSON summary line when the status is set or on failure.
//
// Environment: FORGEAPI_URL (the API base URL), APP_ID, PRIVATE_KEY_FILE
// (PEM), OWNER, REPO.
import fs from "node:fs";
import { Octokit } from "@octokit/rest";
import { createAppAuth } from "@octokit/auth-app";
import { Webhooks } from "@octokit/webhooks";
import { receiveAppWebhooks } from "./app-receiver.mjs";

const { FORGEAPI_URL: baseUrl, APP_ID, PRIVATE_KEY_FILE, OWNER: owner, REPO: repo } = process.env;
const appId = Number(APP_ID);
const privateKey = fs.readFileSync(PRIVATE_KEY_FILE, "utf8");
const secret = "probot-s3cret";
const deadline = setTimeout(() => finish({ error: "timed out waiting for a push" }), 60_000);

const app = new Octokit({ baseUrl, authStrategy: createAppAuth, auth: { appId, privateKey } });
const summary = { failures: [] };

function finish(extra) {
  clearTimeout(deadline);
  process.stdout.write(JSON.stringify({ ...summary, ...extra }) + "\n");
  server?.close();
  process.exit(0);
}

// onPush is the app's handler: a status on the pushed commit, set with
// an installation token of the delivery's installation.
async function onPush({ payload }) {
  summary.pushInstallationId = payload.installation?.id;
  const { token, expiresAt, repositorySelection } = await app.auth({
    type: "installation", installationId: payload.installation.id,
  });
  summary.tokenExpiresAt = expiresAt;
  summary.repositorySelection = repositorySelection;
  const installation = new Octokit({ baseUrl, auth: token });
  const { data: status } = await installation.rest.repos.createCommitStatus({
    owner, repo, sha: payload.after, state: "success", context: "octokit-app", description: "seen by the app",
  });
  summary.statusCreator = status.creator.login;
  summary.statusSHA = payload.after;
  finish({});
}

const webhooks = new Webhooks({ secret });
webhooks.on("push", (event) => onPush(event).catch((err) => finish({ error: String(err) })));
let server;
try {
  server = await receiveAppWebhooks({ app, webhooks, secret, summary });
  const { data: me } = await app.rest.apps.getAuthenticated();
  summary.slug = me.slug;
  const { data: inst } = await app.rest.apps.getRepoInstallation({ owner, repo });
  summary.installationId = inst.id;
  process.stdout.write(JSON.stringify({ ready: true }) + "\n");
} catch (err) {
  finish({ error: String(err) });
}
