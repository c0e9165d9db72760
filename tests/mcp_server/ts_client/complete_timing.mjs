// Times completion/complete of the note template's path with the official MCP TypeScript SDK over
// `vaultwatch bridge`, and a ping after each completion on the same path (what the transport alone costs).
// Two phases: "steady" asks each prefix `rounds` times on one index generation (after one warm-up call);
// "after_change" first writes a new note under `scratch` (a new generation) and then asks one prefix,
// `changes` times, so each completion is the first on its generation. The notes it wrote are deleted
// at the end. It also adds up the CPU time the server and the bridge spent on each request (Linux
// schedstat of every thread: on-CPU nanoseconds, which a loaded machine's waiting does not inflate).
// Prints one JSON report.
// Usage: node complete_timing.mjs <json {rounds, prefixes, changes, scratch, vault}> <command> [args...]
import { readdirSync, readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [optionsJson, command, ...args] = process.argv.slice(2);
const { rounds, prefixes, changes, scratch, vault } = JSON.parse(optionsJson);
// the whole environment: the caller gives the bridge (and the server it starts) its own folders
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "pipe" });
const client = new Client({ name: "ts-sdk-complete-timing", version: "1.0.0" });
// cpu: per request, [server ms, bridge ms] on CPU while it was under way
const phase = () => ({ samples: [], pings: [], cpu: { complete: [], ping: [] } });
const phases = { steady: phase(), after_change: phase() };
const report = { phases, answers: {}, written: [] };
const ref = { type: "ref/resource", uri: "vault://note/{+path}" };
let watched = []; // the server's and the bridge's pids

function headlessServer() {
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      if (argv.includes("--headless") && argv.includes(vault)) return Number(pid);
    } catch {}
  }
  return null;
}

function cpuNs() {
  const out = [0, 0];
  watched.forEach((pid, i) => {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        out[i] += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
      } catch {} // a thread that ended meanwhile
    }
  });
  return out;
}

// A server just started builds its full-text index (and more) in the background: measure once it is quiet
// (under 5% of a core over half a second, twice running), so its CPU time is the requests'.
async function settled(limitMs) {
  const until = performance.now() + limitMs;
  let quiet = 0;
  while (quiet < 2 && performance.now() < until) {
    const before = cpuNs()[0];
    await new Promise((resolve) => setTimeout(resolve, 500));
    quiet = cpuNs()[0] - before < 25e6 ? quiet + 1 : 0;
  }
  return quiet >= 2;
}

async function measured(phase, kind, request) {
  const before = cpuNs();
  const t = performance.now();
  const answer = await request();
  (kind === "ping" ? phase.pings : phase.samples).push(performance.now() - t);
  const after = cpuNs();
  phase.cpu[kind].push([(after[0] - before[0]) / 1e6, (after[1] - before[1]) / 1e6]);
  return answer;
}

async function timed(phase, value) {
  const answer = await measured(phase, "complete", () => client.complete({ ref, argument: { name: "path", value } }));
  await measured(phase, "ping", () => client.ping());
  return answer.completion;
}

function failed(result) {
  return result.isError ? new Error(JSON.stringify(result.content)) : null;
}

try {
  await client.connect(transport);
  await client.callTool({ name: "list_documents", arguments: { limit: 1, wait_for_pending_writes: true } });
  await client.complete({ ref, argument: { name: "path", value: "" } });
  const server = headlessServer();
  if (server === null) throw new Error(`no headless server of ${vault} found in /proc`);
  watched = [server, transport.pid];
  report.settled = await settled(300_000);
  for (let r = 0; r < rounds; r++) {
    for (const value of prefixes) report.answers[value] = await timed(phases.steady, value);
  }
  for (let c = 0; c < changes; c++) {
    const path = `${scratch}/note ${String(c).padStart(3, "0")}.md`;
    const wrote = await client.callTool({ name: "write", arguments: { path, content: `# ${c}\n` } });
    if (failed(wrote)) throw failed(wrote);
    report.written.push(path);
    // what the write set going in the background (the full-text index, note vectors) is not the completion's
    if (await settled(3_000)) report.settled_changes = (report.settled_changes ?? 0) + 1;
    const answer = await timed(phases.after_change, prefixes[c % prefixes.length]);
    // the note just written is the newest: an answer for its folder must start with it
    const own = await client.complete({ ref, argument: { name: "path", value: `${scratch}/` } });
    if (own.completion.values[0] !== path) throw new Error(`stale completion: ${JSON.stringify(own.completion)}`);
    report.answers[`after_change ${prefixes[c % prefixes.length]}`] = answer;
  }
  for (const path of report.written) {
    const gone = await client.callTool({ name: "delete", arguments: { path } });
    if (failed(gone)) throw failed(gone);
  }
  await client.close();
  report.ok = true;
} catch (err) {
  report.ok = false;
  report.error = String(err?.stack ?? err);
}
process.stdout.write(JSON.stringify(report) + "\n", () => process.exit(report.ok ? 0 : 1));
