// Drives a live job with the official TypeScript MCP SDK v2 (`@modelcontextprotocol/client`,
// validating every structured result against its output schema): an interactive Python REPL on
// a terminal of its own, approved by the user through the real CLI, computes 6*7; `job_logs`
// waits for the answer; Ctrl-D ends the REPL and `job_status` waits for the end. Then a Node
// dev server is published, becomes ready, is fetched with fetch_from_job and is gone after
// cancel_job. Exits non-zero on the first failed check.
//
// Env: SLUICE_URL, SLUICE_TOKEN, SLUICE_BIN (the `sluice` CLI; SLUICE_DATA_DIR names its data
// folder), SLUICE_CANARY. Project "demo" in `any` mode. Prints "OK <n> checks".
import { execFileSync } from "node:child_process";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const url = process.env.SLUICE_URL;
const token = process.env.SLUICE_TOKEN;
const canary = process.env.SLUICE_CANARY;
let checks = 0;
const seen = [];

function check(cond, what, got) {
  checks += 1;
  if (!cond) {
    console.error(`FAILED: ${what}\n  got: ${JSON.stringify(got)?.slice(0, 4000)}`);
    process.exit(1);
  }
}

function sluice(...args) {
  return execFileSync(process.env.SLUICE_BIN, args, {
    env: { ...process.env, SLUICE_SECRET_STORE: "file" },
    encoding: "utf8",
  });
}

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client(
  { name: "sluice-ts-live-test", version: "0.0.0" },
  { versionNegotiation: { mode: "auto" } },
);
await client.connect(transport);

async function ok(name, args) {
  const res = await client.callTool({ name, arguments: args });
  seen.push(JSON.stringify(res));
  check(!res.isError, `${name} succeeds`, res);
  return res.structuredContent;
}

// The user approves the interactive start; the card says the assistant will type into it.
const starting = ok("start_job", {
  project: "demo", program: "python3", args: ["-i", "-q"], interactive: "terminal",
});
let asked = 0;
let done = false;
starting.then(() => { done = true; });
while (!done) {
  for (const a of JSON.parse(sluice("approvals", "list", "--json"))) {
    if (a.state === "pending" && a.tool === "start_job") {
      check(a.summary.includes("type into"), "the card says the assistant will type", a.summary);
      sluice("approvals", "approve", a.id);
      asked += 1;
    }
  }
  await new Promise((r) => setTimeout(r, 100));
}
const job = await starting;
check(asked === 1 && job.interactive === "terminal", "an approved interactive job", job);

const prompt = await ok("job_logs", { job_id: job.job_id, pattern: ">>> $", wait_seconds: 30 });
check(prompt.waited === "pattern", "the REPL prompts", prompt);
const sent = await ok("write_job_input", { job_id: job.job_id, text: "6*7", keys: ["enter"] });
check(sent.bytes_sent === 4, "four bytes typed", sent);
const answer = await ok("job_logs", {
  job_id: job.job_id, cursor: sent.next_cursor, pattern: "42\\s", wait_seconds: 30,
});
check(answer.waited === "pattern" && answer.text.includes("42"), "6*7 answers 42", answer);
await ok("write_job_input", { job_id: job.job_id, keys: ["ctrl-d"] });
const ended = await ok("job_status", { job_id: job.job_id, wait_seconds: 30 });
check(ended.state === "succeeded", "Ctrl-D ends the REPL; the status wait sees it", ended);

// A Node dev server, published: the user approves it (the card names the port), the start
// waits until the port accepts, and the assistant fetches it; cancel_job takes it down.
const serverCode =
  "require('http').createServer((q, r) => r.end('NODE-' + q.method + q.url))" +
  ".listen(3000, '127.0.0.1')";
const serving = ok("start_job", {
  project: "demo", program: "node", args: ["-e", serverCode],
  publish: [3000], ready: { port: 3000, timeout_seconds: 30 },
});
let served = false;
let cards = 0;
serving.then(() => { served = true; });
while (!served) {
  for (const a of JSON.parse(sluice("approvals", "list", "--json"))) {
    if (a.state === "pending" && a.tool === "start_job") {
      check(a.summary.includes("publishes port 3000"), "the card names the port", a.summary);
      sluice("approvals", "approve", a.id);
      cards += 1;
    }
  }
  await new Promise((r) => setTimeout(r, 100));
}
const server = await serving;
check(cards === 1 && server.ready === "ready", "the approved server is ready", server);
check(server.ports.length === 1 && server.ports[0].port === 3000, "port 3000 published", server);
const page = await ok("fetch_from_job", {
  job_id: server.job_id, port: 3000, path: "/hi?x=1", method: "POST", body: "{}",
  headers: { "content-type": "application/json" },
});
check(page.status === 200 && page.body === "NODE-POST/hi?x=1", "the assistant fetches it", page);
const cancelled = await ok("cancel_job", { job_id: server.job_id });
check(cancelled.ports.length === 0, "a cancelled server publishes nothing", cancelled);
const after = await client.callTool({
  name: "fetch_from_job", arguments: { job_id: server.job_id, port: 3000 },
});
check(after.isError && after.structuredContent.code === "port_not_published",
  "its port is gone with it", after);

for (const s of seen) check(!s.includes(canary), "no canary in any response", s);
await client.close();
console.log(`OK ${checks} checks`);
