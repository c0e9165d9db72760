// A TypeScript SDK client that declares elicitation: it answers the server's elicitation/create
// with ANSWER ("accept" = apply, "decline" = with reason) and prints one JSON report.
// Usage: node elicit_client.mjs ANSWER TOOL ARGS_JSON <command> [args...]   (the bridge command line)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [answer, tool, argsJson, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "pipe" });
const client = new Client({ name: "ts-elicit-client", version: "1.0.0" }, { capabilities: { elicitation: {} } });
const report = { asked: [] };
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  report.asked.push(request.params.message);
  if (answer === "accept") return { action: "accept", content: { approve: true } };
  return { action: "accept", content: { approve: false, reason: "the TypeScript person says no" } };
});
try {
  await client.connect(transport);
  report.protocol = transport.protocolVersion ?? null;
  const r = await client.callTool({ name: tool, arguments: JSON.parse(argsJson) });
  report.isError = r.isError ?? false;
  report.text = r.content?.[0]?.text ?? null;
  report.ok = true;
} catch (err) {
  report.ok = false;
  report.error = String(err?.stack ?? err);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(report) + "\n");
