// A `review` token through the official TypeScript MCP SDK v2: `tools/list` offers only the
// review tools (every one read-only but `drop_privileges`, which only takes away), a change is
// refused with `outside_profile` and the file stays unwritten, a read works.
//
// Env: SLUICE_URL, SLUICE_TOKEN. Prints "OK <n> checks".
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

let checks = 0;
function check(cond, what, got) {
  checks += 1;
  if (!cond) {
    console.error(`FAILED: ${what}\n  got: ${JSON.stringify(got)?.slice(0, 4000)}`);
    process.exit(1);
  }
}

const transport = new StreamableHTTPClientTransport(new URL(process.env.SLUICE_URL), {
  requestInit: { headers: { Authorization: `Bearer ${process.env.SLUICE_TOKEN}` } },
});
const client = new Client(
  { name: "sluice-ts-profiles", version: "0.0.0" },
  { versionNegotiation: { mode: "auto" } },
);
await client.connect(transport);

const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
for (const change of ["write_file", "edit_file", "delete_path", "run_command", "start_job", "cancel_job"]) {
  check(!names.includes(change), `a review token is not offered ${change}`, names);
}
for (const read of ["read_file", "search_text", "git_log", "read_media", "list_projects"]) {
  check(names.includes(read), `a review token is offered ${read}`, names);
}
for (const t of tools) {
  if (t.name !== "drop_privileges") {
    check(t.annotations?.readOnlyHint === true, `${t.name} is read-only`, t.annotations);
  }
}
const write = await client.callTool({
  name: "write_file",
  arguments: { project: "demo", path: "from-review.txt", content: "x" },
});
check(write.isError === true && write.structuredContent?.code === "outside_profile",
  "a write is refused with outside_profile", write);
check(/review/.test(write.structuredContent?.message ?? ""), "the refusal names the profile", write);
const read = await client.callTool({ name: "read_file", arguments: { project: "demo", path: "README.md" } });
check(!read.isError && read.structuredContent?.content?.includes("hello world"), "a read works", read);
await client.close();
console.log(`OK ${checks} checks`);
