// Drives Sluice with the official TypeScript MCP SDK v2 (`@modelcontextprotocol/client`, which
// speaks 2026-07-28): every tool once — the SDK validates each structured result against the
// tool's declared output schema — plus refusals. Exits non-zero on the first failed check.
//
// Env: SLUICE_URL, SLUICE_TOKEN, SLUICE_CANARY. Prints "OK <n> checks".
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

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
// `auto`: the SDK probes with `server/discover` and speaks 2026-07-28 (its default is the
// 2025-11-25 handshake).
const client = new Client(
  { name: "sluice-ts-test", version: "0.0.0" },
  { versionNegotiation: { mode: "auto" } },
);
await client.connect(transport);
check(client.getNegotiatedProtocolVersion() === "2026-07-28", "speaks 2026-07-28", client.getNegotiatedProtocolVersion());

async function call(name, args) {
  const res = await client.callTool({ name, arguments: args });
  seen.push(JSON.stringify(res));
  return res;
}
async function ok(name, args) {
  const res = await call(name, args);
  check(!res.isError, `${name} succeeds`, res);
  check(res._meta?.["io.modelcontextprotocol/serverInfo"]?.name === "sluice", `${name} names the server in _meta`, res._meta);
  check(res.structuredContent !== undefined, `${name} returns structured content`, res);
  return res.structuredContent;
}
async function refused(name, args, code) {
  const res = await call(name, args);
  check(res.isError === true, `${name}(${JSON.stringify(args)}) is refused`, res);
  check(res.structuredContent?.code === code, `${name} refusal code ${code}`, res.structuredContent);
}

const { tools } = await client.listTools();
const writeTools = ["write_file", "edit_file", "apply_patch", "move_path", "create_directory", "delete_path", "restore", "run_command", "run_tests", "run_build", "start_job", "cancel_job", "drop_privileges"];
check(tools.length === 29, "twenty-nine tools", tools.map((t) => t.name));
for (const t of tools) {
  const readOnly = !writeTools.includes(t.name);
  check(t.annotations?.readOnlyHint === readOnly, `${t.name} read-only hint`, t.annotations);

  for (const [prop, schema] of Object.entries(t.inputSchema.properties ?? {})) {
    check(typeof schema.description === "string", `${t.name}.${prop} has a description`, schema);
    check(!String(schema.format ?? "").startsWith("uint"), `${t.name}.${prop} has no uint format`, schema);
  }
}

const p = { project: "demo" };
const projects = await ok("list_projects", {});
check(projects.projects.some((x) => x.name === "demo"), "demo listed", projects);
await ok("server_info", {});
await ok("system_info", {});
const listing = await ok("list_directory", { ...p, depth: 2 });
check(listing.entries.some((e) => e.path === "src/main.rs"), "list_directory", listing);
check(!listing.entries.some((e) => e.path === ".env"), ".env hidden", listing);
await ok("stat", { ...p, path: "README.md" });
const file = await ok("read_file", { ...p, path: "README.md" });
check(file.content.includes("hello world"), "read_file", file);
const found = await ok("find_files", { ...p, globs: ["**/*.rs"] });
check(found.matches.length === 1, "find_files", found);
const hits = await ok("search_text", { ...p, pattern: "hello", literal: true });
check(hits.matches.length === 2, "search_text", hits);
await ok("git_status", p);
await ok("git_diff", p);
const log = await ok("git_log", p);
check(log.commits[0].subject === "first commit", "git_log", log);
await ok("git_show", { ...p, rev: "HEAD" });

await refused("read_file", { ...p, path: "../outside.txt" }, "path_invalid");
await refused("read_file", { ...p, path: ".env" }, "path_shielded");
await refused("read_file", { project: "nope", path: "x" }, "project_not_found");
await refused("git_show", { ...p, rev: "--output=/tmp/x" }, "invalid_argument");

// A wrong token: the SDK hears Sluice's 401 and its stable reason, not a hang or a crash.
const stranger = new Client({ name: "sluice-ts-stranger", version: "0.0.0" });
let refusal = null;
try {
  await stranger.connect(new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: "Bearer slc_not_a_token" } },
  }));
} catch (e) {
  refusal = e;
}
check(refusal !== null, "a wrong token cannot connect", null);
check(/401|unauthorized/i.test(`${refusal} ${refusal?.code}`), "the SDK reports the 401", String(refusal));

for (const text of seen) check(!text.includes(canary), "no canary in any response", text);
await client.close();
console.log(`OK ${checks} checks`);
