// The TS SDK's Streamable HTTP client across a server restart: connect, call, then (after the
// test restarts the server, told by a line on stdin) see the old session fail and re-initialize.
// Usage: node http_client.mjs URL TOKEN    (prints JSON lines: one per phase)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createInterface } from "node:readline";

const [url, token] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");

async function connect() {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "ts-http-client", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

try {
  let { client, transport } = await connect();
  const first = await client.callTool({ name: "list_documents", arguments: { limit: 1 } });
  say({ phase: "first", total: first.structuredContent?.total ?? null, session: transport.sessionId ?? null });
  await lines.next(); // the test restarted the server
  let failed = null;
  try {
    await client.callTool({ name: "list_documents", arguments: { limit: 1 } });
  } catch (err) {
    failed = String(err?.message ?? err);
  }
  if (failed !== null) {
    await client.close().catch(() => {});
    ({ client, transport } = await connect()); // what an application does on "Session not found"
  }
  const again = await client.callTool({ name: "list_documents", arguments: { limit: 1 } });
  say({ phase: "after", failed, total: again.structuredContent?.total ?? null, session: transport.sessionId ?? null });
  await client.close();
  process.exit(0);
} catch (err) {
  say({ phase: "error", error: String(err?.stack ?? err) });
  process.exit(1);
}
