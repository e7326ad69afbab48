// The official Actions toolkit clients against forgeapi's results service,
// run from a workflow step (internal/actions artifacts and caches tests):
// the job's ACTIONS_RUNTIME_TOKEN and ACTIONS_RESULTS_URL are the server's.
//
//   node actions-runtime.mjs upload NAME DIR        upload DIR's files as artifact NAME
//   node actions-runtime.mjs download NAME DIR      list the run's artifacts, download NAME into DIR
//   node actions-runtime.mjs cache-save KEY DIR     save DIR as cache KEY
//   node actions-runtime.mjs cache-restore KEY RESTORE_KEY DIR   restore into DIR
//
// Each prints one JSON line with what the client returned.
import fs from 'node:fs';
import path from 'node:path';
import { DefaultArtifactClient } from '@actions/artifact';
import * as cache from '@actions/cache';

function files(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...files(p));
    else out.push(p);
  }
  return out;
}

const [cmd, a, b, c] = process.argv.slice(2);
const client = new DefaultArtifactClient();
let result;
switch (cmd) {
  case 'upload': {
    const dir = path.resolve(b);
    result = await client.uploadArtifact(a, files(dir), dir, { retentionDays: 5 });
    break;
  }
  case 'download': {
    const { artifacts } = await client.listArtifacts();
    const found = await client.getArtifact(a);
    const dl = await client.downloadArtifact(found.artifact.id, { path: path.resolve(b) });
    result = { listed: artifacts.map((x) => x.name).sort(), id: found.artifact.id, size: found.artifact.size, path: dl.downloadPath };
    break;
  }
  case 'cache-save': {
    result = { id: await cache.saveCache([b], a) };
    break;
  }
  case 'cache-restore': {
    result = { matched: (await cache.restoreCache([c], a, [b])) ?? null };
    break;
  }
  default:
    throw new Error(`unknown command ${cmd}`);
}
console.log(JSON.stringify(result));
