// octokit-hooks.mjs drives a forgeapi server with octokit.js as an
// integration would: it creates a repository hook with @octokit/rest,
// receives the deliveries with @octokit/webhooks (verifyAndReceive, handlers
// by event name), pages through the delivery log, redelivers one delivery,
// and polls a feed with If-None-Match. It prints one JSON summary line;
// the Go test (internal/webhooks/octokit_test.go) starts the server, runs
// this script and checks the summary.
//
// Environment: FORGEAPI_URL (the API base URL, https://HOST/api/v3 as for a
// self-managed server), FORGEAPI_TOKEN, OWNER, REPO.
import http from "node:http";
import { Octokit } from "@octokit/rest";
import { Webhooks } from "@octokit/webhooks";

const { FORGEAPI_URL, FORGEAPI_TOKEN, OWNER: owner, REPO: repo } = process.env;
const secret = "octokit-s3cret";
const deadline = Date.now() + 60_000;

const logged = [];
const octokit = new Octokit({
  baseUrl: FORGEAPI_URL,
  auth: FORGEAPI_TOKEN,
  log: {
    debug() {},
    info(m) { logged.push(m); },
    warn(m) { logged.push(m); },
    error(m) { logged.push(m); },
  },
});

// The receiver: @octokit/webhooks verifies the signature and routes on the
// event name; the handlers count what they see.
const webhooks = new Webhooks({ secret });
const seen = { ping: 0, edited: 0, deliveries: [] };
webhooks.on("ping", ({ id, payload }) => {
  if (payload.hook_id && payload.zen) seen.ping++;
  seen.deliveries.push(id);
});
webhooks.on("repository.edited", ({ id, payload }) => {
  if (payload.repository.full_name === `${owner}/${repo}`) seen.edited++;
  seen.deliveries.push(id);
});
const failures = [];
const server = http.createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (chunk) => (body += chunk));
  req.on("end", async () => {
    try {
      await webhooks.verifyAndReceive({
        id: req.headers["x-github-delivery"],
        name: req.headers["x-github-event"],
        signature: req.headers["x-hub-signature-256"],
        payload: body,
      });
      res.writeHead(200).end("ok");
    } catch (err) {
      failures.push(String(err));
      res.writeHead(400).end(String(err));
    }
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const receiverURL = `http://127.0.0.1:${server.address().port}/hook`;

// until polls cond every 20 ms until it holds or the deadline passes.
async function until(what, cond) {
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const summary = { failures };
try {
  const { data: hook } = await octokit.rest.repos.createWebhook({
    owner, repo, events: ["repository"],
    config: { url: receiverURL, content_type: "json", secret },
  });
  await until("the ping", () => seen.ping === 1);

  const edits = 5;
  for (let i = 0; i < edits; i++) {
    await octokit.rest.repos.update({ owner, repo, description: `edit ${i}` });
  }
  await until("the repository events", () => seen.edited === edits);

  // The delivery log, two to a page: octokit follows the Link header.
  let log = [];
  let pages = 0;
  await until("the delivery log", async () => {
    log = [];
    pages = 0;
    for await (const page of octokit.paginate.iterator(octokit.rest.repos.listWebhookDeliveries,
      { owner, repo, hook_id: hook.id, per_page: 2 })) {
      pages++;
      log.push(...page.data);
    }
    return log.length === edits + 1 && log.every((d) => d.status_code === 200);
  });
  summary.logged = log.length;
  summary.pages = pages;
  summary.loggedGUIDs = log.map((d) => d.guid).sort();
  summary.receivedGUIDs = [...seen.deliveries].sort();

  // Redeliver the ping: 202, then the receiver gets it again with its
  // GUID, and the log lists it as a redelivery.
  const ping = log.find((d) => d.event === "ping");
  const redelivery = await octokit.rest.repos.redeliverWebhookDelivery({
    owner, repo, hook_id: hook.id, delivery_id: ping.id,
  });
  summary.redeliveryStatus = redelivery.status;
  await until("the redelivered ping", () => seen.ping === 2);
  await until("the redelivery in the log", async () => {
    const { data } = await octokit.rest.repos.listWebhookDeliveries({ owner, repo, hook_id: hook.id, per_page: 100 });
    summary.redelivered = data.filter((d) => d.redelivery && d.guid === ping.guid && d.status_code === 200).length;
    return summary.redelivered === 1;
  });

  // Poll the repository's feed: a star makes an event; asking again with
  // the ETag answers 304, which octokit reports as an error with status.
  await octokit.rest.activity.starRepoForAuthenticatedUser({ owner, repo });
  const first = await octokit.rest.activity.listRepoEvents({ owner, repo });
  summary.feedTypes = first.data.map((e) => e.type);
  summary.pollInterval = first.headers["x-poll-interval"];
  summary.requestID = first.headers["x-github-request-id"];
  try {
    await octokit.rest.activity.listRepoEvents({ owner, repo, headers: { "if-none-match": first.headers.etag } });
    summary.pollStatus = 200;
  } catch (err) {
    summary.pollStatus = err.status;
  }
} catch (err) {
  summary.error = `${err.status ?? ""} ${err.message}`;
} finally {
  summary.unknownIDs = logged.filter((m) => /UNKNOWN/.test(m)).length;
  summary.requestsLogged = logged.length;
  server.close();
}
console.log(JSON.stringify(summary));
