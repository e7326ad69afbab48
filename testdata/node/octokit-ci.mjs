// octokit-ci.mjs is a CI app on octokit.js: it authenticates as the app
// with @octokit/auth-app, points the app's webhook at its own receiver,
// and on check_suite "requested" (received with @octokit/webhooks
// verifyAndReceive) reports a check run with an installation's octokit:
// created in progress, then completed as a failure with an annotation.
//
// It prints {"ready": true} once its receiver listens and the webhook
// points at it (the Go test, internal/checks/octokit_test.go, then
// pushes), and one JSON summary line when the run is completed or on
// failure.
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
const secret = "ci-s3cret";
const deadline = setTimeout(() => finish({ error: "timed out waiting for check_suite" }), 60_000);

const app = new Octokit({ baseUrl, authStrategy: createAppAuth, auth: { appId, privateKey } });
const summary = { failures: [] };

function finish(extra) {
  clearTimeout(deadline);
  process.stdout.write(JSON.stringify({ ...summary, ...extra }) + "\n");
  server?.close();
  process.exit(0);
}

// onSuite runs the build of the suite's head: a check run in progress,
// then its failure with an annotation.
async function onSuite({ payload }) {
  summary.suiteAction = payload.action;
  summary.headSHA = payload.check_suite.head_sha;
  const installation = new Octokit({
    baseUrl, authStrategy: createAppAuth,
    auth: { appId, privateKey, installationId: payload.installation.id },
  });
  const { data: run } = await installation.rest.checks.create({
    owner, repo, name: "octo-ci", head_sha: payload.check_suite.head_sha, status: "in_progress",
  });
  summary.runStatus = run.status;
  const { data: done } = await installation.rest.checks.update({
    owner, repo, check_run_id: run.id, conclusion: "failure",
    output: {
      title: "1 test failed", summary: "TestThing failed",
      annotations: [{ path: "a.txt", start_line: 1, end_line: 1, annotation_level: "failure", message: "not one" }],
    },
  });
  summary.runId = done.id;
  summary.conclusion = done.conclusion;
  summary.appSlug = done.app.slug;
  finish({});
}

const webhooks = new Webhooks({ secret });
webhooks.on("check_suite.requested", (event) => onSuite(event).catch((err) => finish({ error: String(err) })));
let server;
try {
  server = await receiveAppWebhooks({ app, webhooks, secret, summary });
  process.stdout.write(JSON.stringify({ ready: true }) + "\n");
} catch (err) {
  finish({ error: String(err) });
}
