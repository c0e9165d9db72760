// Notifications through `vaultwatch bridge` with the official MCP TypeScript SDK; prints one JSON report.
// Usage: node events.mjs progress <tool> <json-arguments> <command> [args...]
//          a call with a progress token: every progress notification heard, and the result
//        node events.mjs resources <vault-folder> <command> [args...]
//          subscribe to Plan.md; change it with the write tool, then on disk (an outside edit); create
//          and delete a note: the resources/updated and list_changed notifications heard after each step
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [mode, ...rest] = process.argv.slice(2);
const report = { mode };
const heard = [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(test, ms = 10000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (test()) return true;
    await sleep(25);
  }
  return false;
}

try {
  let command, args;
  if (mode === "progress") [report.tool, report.args, command, ...args] = rest;
  else [report.vault, command, ...args] = rest;
  const transport = new StdioClientTransport({ command, args, stderr: "pipe" });
  const client = new Client({ name: "ts-sdk-events", version: "1.0.0" });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => heard.push(["updated", n.params.uri]));
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => heard.push(["list_changed"]));
  await client.connect(transport);
  report.capabilities = client.getServerCapabilities();
  if (mode === "progress") {
    const progress = [];
    const r = await client.callTool({ name: report.tool, arguments: JSON.parse(report.args) }, undefined, {
      onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true, timeout: 120000,
    });
    report.progress = progress;
    report.isError = r.isError ?? false;
    report.text = r.content?.[0]?.text?.slice(0, 300) ?? null;
  } else {
    const uri = "vault://note/Plan.md";
    const steps = {};
    const step = async (name, action, want, ms = 10000) => {
      const from = heard.length;
      await action();
      await until(() => heard.slice(from).some(want), ms);
      steps[name] = heard.slice(from);
    };
    await client.subscribeResource({ uri });
    await step("write", () => client.callTool({ name: "write", arguments: { path: "Plan.md", content: "# Plan\nby the agent\n", overwrite: true } }),
      (h) => h[0] === "updated" && h[1] === uri);
    await step("outside", async () => writeFileSync(join(report.vault, "Plan.md"), "# Plan\nby an editor\n"),
      (h) => h[0] === "updated" && h[1] === uri);
    await step("create", () => client.callTool({ name: "write", arguments: { path: "Fresh.md", content: "# Fresh\n" } }),
      (h) => h[0] === "list_changed");
    await client.unsubscribeResource({ uri });
    await step("after_unsubscribe", async () => writeFileSync(join(report.vault, "Plan.md"), "# Plan\nagain\n"),
      () => false, 1500);
    report.steps = steps;
    const read = await client.readResource({ uri });
    report.read = read.contents?.[0]?.text ?? null;
  }
  await client.close();
  report.ok = true;
} catch (err) {
  report.ok = false;
  report.error = String(err?.stack ?? err);
}
report.heard = heard;
process.stdout.write(JSON.stringify(report) + "\n", () => process.exit(report.ok ? 0 : 1));
