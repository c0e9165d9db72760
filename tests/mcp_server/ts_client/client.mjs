// Drives `vaultwatch bridge` with the official MCP TypeScript SDK and prints one JSON report.
// Usage: node client.mjs <command> [args...]   (the bridge command line)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, stderr: "pipe" });
const client = new Client({ name: "ts-sdk-test-client", version: "1.0.0" });
const report = { calls: {} };
try {
  await client.connect(transport);
  report.server = client.getServerVersion();
  const tools = await client.listTools();
  report.tools = tools.tools.map((t) => ({
    name: t.name,
    readOnly: t.annotations?.readOnlyHint ?? null,
    hasOutputSchema: Boolean(t.outputSchema),
  }));
  const calls = {
    list: ["list_documents", { folder: "Projects", limit: 3 }],
    deprecated: ["list_documents", { filters: { status: "deprecated" } }],
    read: ["read", { path: "index.md", section: "Work" }],
    paths: ["vault_list_notes", { folder: "Projects", glob: "*.md" }],
    hidden: ["read", { path: ".obsidian/app.json" }],
    badArgs: ["list_documents", { limit: "many" }],
  };
  for (const [key, [name, callArgs]] of Object.entries(calls)) {
    let r;
    try {
      r = await client.callTool({ name, arguments: callArgs });
    } catch (err) { // a protocol error (e.g. -32602 for a tool this server does not offer)
      report.calls[key] = { isError: true, protocolError: err?.code ?? null, text: String(err?.message ?? err) };
      continue;
    }
    report.calls[key] = {
      isError: r.isError ?? false,
      text: r.content?.[0]?.text ?? null,
      structured: r.structuredContent ?? null,
      meta: r._meta ?? null,
    };
  }
  await client.close();
  report.ok = true;
} catch (err) {
  report.ok = false;
  report.error = String(err?.stack ?? err);
}
process.stdout.write(JSON.stringify(report) + "\n");
process.exit(report.ok ? 0 : 1);
