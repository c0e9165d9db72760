// Times completion/complete of the note template's path with the official MCP TypeScript SDK over
// `vaultwatch bridge`: each prefix `rounds` times, one request at a time, after one warm-up call.
// Prints one JSON report. Usage: node complete_timing.mjs <rounds> <json-prefixes> <command> [args...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [rounds, prefixesJson, command, ...args] = process.argv.slice(2);
// the whole environment: the caller gives the bridge (and the server it starts) its own folders
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "pipe" });
const client = new Client({ name: "ts-sdk-complete-timing", version: "1.0.0" });
const report = { samples: [], answers: {} };
const ref = { type: "ref/resource", uri: "vault://note/{+path}" };
try {
  await client.connect(transport);
  await client.callTool({ name: "list_documents", arguments: { limit: 1, wait_for_pending_writes: true } });
  await client.complete({ ref, argument: { name: "path", value: "" } });
  for (let r = 0; r < Number(rounds); r++) {
    for (const value of JSON.parse(prefixesJson)) {
      const t = performance.now();
      const answer = await client.complete({ ref, argument: { name: "path", value } });
      report.samples.push(performance.now() - t);
      report.answers[value] = answer.completion;
      const p = performance.now();
      await client.ping();
      (report.pings ??= []).push(performance.now() - p);
    }
  }
  await client.close();
  report.ok = true;
} catch (err) {
  report.ok = false;
  report.error = String(err?.stack ?? err);
}
process.stdout.write(JSON.stringify(report) + "\n", () => process.exit(report.ok ? 0 : 1));
