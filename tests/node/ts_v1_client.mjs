// Drives Sluice with the TypeScript MCP SDK v1 (`@modelcontextprotocol/sdk` 1.x, what most
// clients embed). v1 validates a tool result's structured content against the tool's output
// schema even when the result is an error, and throws if it does not match: then the model
// never sees Sluice's error code and recovery message. Every refusal below must reach the
// caller as a result with `isError`, its `{code, message}` and the same text.
//
// Env: SLUICE_URL, SLUICE_TOKEN. Prints "OK <n> checks".
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

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
const client = new Client({ name: "sluice-ts-v1-test", version: "0.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
check(tools.every((t) => t.outputSchema), "every tool declares an output schema", tools);

async function refused(name, args, code) {
  let res;
  try {
    res = await client.callTool({ name, arguments: args });
  } catch (e) {
    check(false, `${name} refusal reaches the caller instead of throwing`, String(e));
  }
  check(res.isError === true, `${name} is an error result`, res);
  check(res._meta?.["io.modelcontextprotocol/serverInfo"]?.name === "sluice", `${name} names the server in _meta`, res._meta);
  check(res.structuredContent?.code === code, `${name} carries code ${code}`, res.structuredContent);
  const text = res.content?.map((c) => c.text ?? "").join("") ?? "";
  let said = null;
  try {
    said = JSON.parse(text);
  } catch {}
  check(said?.code === code && said?.message === res.structuredContent.message, `${name}: the text says the same`, res.content);
}

const p = { project: "demo" };
await refused("read_file", { ...p, path: "missing.txt" }, "not_found");
await refused("read_file", { ...p, path: "../outside.txt" }, "path_invalid");
await refused("list_directory", { project: "nope", path: "." }, "project_not_found");
await refused("write_file", { ...p, path: "x.txt", content: "x" }, "read_only_project");
await refused("run_command", { ...p, program: "true" }, "forbidden");
await refused("job_status", { job_id: "job_nope" }, "not_found");
await refused("git_show", { ...p, rev: "--output=/tmp/x" }, "invalid_argument");
await refused("read_media", { ...p, path: "media/bomb.png" }, "image_too_large");
await refused("read_media", { ...p, path: "media/cut.png" }, "image_invalid");
// And a success still validates against the schema.
const ok = await client.callTool({ name: "read_file", arguments: { ...p, path: "README.md" } });
check(!ok.isError && typeof ok.structuredContent?.content === "string", "read_file succeeds", ok);
const picture = await client.callTool({ name: "read_media", arguments: { ...p, path: "media/dot.png" } });
check(!picture.isError && picture.structuredContent?.kind === "image" && picture.content[0].type === "image", "read_media succeeds", picture.structuredContent);

await client.close();
console.log(`OK ${checks} checks`);
