// app-receiver.mjs is the webhook receiver the app scripts share
// (octokit-app.mjs, octokit-ci.mjs): an HTTP server that hands every
// delivery to @octokit/webhooks verifyAndReceive (a bad signature is a
// 400, recorded in summary.failures), and, once it listens, points the
// app's own webhook at itself (PATCH /app/hook/config, as the app).
import http from "node:http";

export async function receiveAppWebhooks({ app, webhooks, secret, summary }) {
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
        summary.failures.push(String(err));
        res.writeHead(400).end(String(err));
      }
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  // The body goes as data: octokit would take a url parameter for the
  // request's own URL.
  await app.request("PATCH /app/hook/config", {
    data: { url: `http://127.0.0.1:${server.address().port}/webhook`, content_type: "json", secret },
  });
  return server;
}
