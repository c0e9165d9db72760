// Pages through a listing with the official MCP TypeScript SDK over `vaultwatch bridge` and prints one
// JSON report: every path in the order received, each answer's text size, and the first call's totals.
// Usage: node page_loop.mjs <tool> <json-arguments> <command> [args...]   (the bridge command line)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [tool, argsJson, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, stderr: "pipe" });
const client = new Client({ name: "ts-sdk-page-loop", version: "1.0.0" });
const report = { paths: [], textBytes: [], totals: [], pages: 0 };
try {
  await client.connect(transport);
  let cursor = undefined;
  do {
    const callArgs = { ...JSON.parse(argsJson), ...(cursor ? { cursor } : {}) };
    const r = await client.callTool({ name: tool, arguments: callArgs });
    if (r.isError) throw new Error(r.content?.[0]?.text ?? "isError");
    const text = r.content?.[0]?.text ?? "";
    report.textBytes.push(Buffer.byteLength(text, "utf8"));
    const s = r.structuredContent;
    report.totals.push(s.total);
    for (const row of s.result) report.paths.push(row.path);
    cursor = s.next_cursor;
    report.pages += 1;
  } while (cursor);
  await client.close();
  report.ok = true;
} catch (err) {
  report.ok = false;
  report.error = String(err?.stack ?? err);
}
// exit only once the report is flushed: a pipe takes 64 KiB at a time
process.stdout.write(JSON.stringify(report) + "\n", () => process.exit(report.ok ? 0 : 1));
