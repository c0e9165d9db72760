// Lists resources first thing after connecting, as clients that show a server's resources do, with the
// official MCP TypeScript SDK over `vaultwatch bridge`: follows nextCursor to the end, then waits (up to
// the given seconds) for a resources/list_changed if the listing said the index was still loading, and
// lists again. Prints one JSON report. Usage: node resources_first.mjs <wait-seconds> <command> [args...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [waitSeconds, command, ...args] = process.argv.slice(2);
// the whole environment: the test gives the bridge (and the server it starts) its own state and cache folders
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "pipe" });
const client = new Client({ name: "ts-sdk-resources-first", version: "1.0.0" });
const report = { first: null, listChanged: 0, again: null, total: null };
let changed = null;
const changedOnce = new Promise((resolve) => (changed = resolve));

async function listAll() {
  const uris = [];
  let pages = 0;
  let loading = false;
  let cursor = undefined;
  do {
    const page = await client.listResources(cursor ? { cursor } : {});
    for (const r of page.resources) uris.push(r.uri);
    loading = loading || Boolean(page._meta?.index_loading);
    cursor = page.nextCursor;
    pages += 1;
  } while (cursor);
  return { count: new Set(uris).size, listed: uris.length, pages, loading };
}

try {
  await client.connect(transport);
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    report.listChanged += 1;
    changed();
  });
  report.first = await listAll();
  if (report.first.loading) {
    await Promise.race([changedOnce, new Promise((r) => setTimeout(r, Number(waitSeconds) * 1000))]);
    report.again = await listAll();
  }
  const listing = await client.callTool({ name: "list_documents", arguments: { include_attachments: true, limit: 1 } });
  report.total = listing.structuredContent.total;
  await client.close();
  report.ok = true;
} catch (err) {
  report.ok = false;
  report.error = String(err?.stack ?? err);
}
process.stdout.write(JSON.stringify(report) + "\n", () => process.exit(report.ok ? 0 : 1));
