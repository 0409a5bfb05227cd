// Drives Sluice with the official TypeScript MCP SDK v2 (`@modelcontextprotocol/client`, which
// speaks 2026-07-28): every tool once — the SDK validates each structured result against the
// tool's declared output schema — plus refusals. Exits non-zero on the first failed check.
//
// Env: SLUICE_URL, SLUICE_TOKEN, SLUICE_CANARY. Prints "OK <n> checks".
import { inflateSync } from "node:zlib";
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
const writeTools = ["write_file", "edit_file", "apply_patch", "move_path", "create_directory", "delete_path", "restore", "create_checkpoint", "restore_checkpoint", "run_command", "run_tests", "run_build", "start_job", "cancel_job", "write_job_input", "fetch_from_job", "drop_privileges", "git_commit", "git_branch", "git_tag", "git_switch", "git_stash", "git_worktree", "code_hover", "code_diagnostics", "code_rename"];
check(tools.length === 49, "forty-nine tools", tools.map((t) => t.name));
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

// read_media: pictures as image content, decoded here; bytes as a blob resource.
function pngSize(buf) {
  check(buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), "a PNG signature", [...buf.subarray(0, 8)]);
  let pos = 8;
  let header = null;
  const idat = [];
  while (pos < buf.length) {
    const n = buf.readUInt32BE(pos);
    const kind = buf.toString("latin1", pos + 4, pos + 8);
    const body = buf.subarray(pos + 8, pos + 8 + n);
    if (kind === "IHDR") header = { w: body.readUInt32BE(0), h: body.readUInt32BE(4), depth: body[8], color: body[9] };
    if (kind === "IDAT") idat.push(body);
    pos += 12 + n;
  }
  const channels = { 0: 1, 2: 3, 4: 2, 6: 4 }[header.color];
  const rows = inflateSync(Buffer.concat(idat)).length;
  check(rows === header.h * (1 + (header.w * channels * header.depth) / 8), "the PNG's pixels are all there", header);
  return [header.w, header.h];
}
function jpegSize(buf) {
  check(buf[0] === 0xff && buf[1] === 0xd8, "a JPEG start marker", [...buf.subarray(0, 2)]);
  for (let pos = 2; pos < buf.length; pos += 2 + buf.readUInt16BE(pos + 2)) {
    if (buf[pos + 1] >= 0xc0 && buf[pos + 1] <= 0xc3) return [buf.readUInt16BE(pos + 7), buf.readUInt16BE(pos + 5)];
  }
  check(false, "a JPEG frame header", null);
}
async function picture(path, extra = {}) {
  const res = await call("read_media", { ...p, path, ...extra });
  check(!res.isError, `read_media(${path}) succeeds`, res);
  const [image, text] = res.content;
  check(image.type === "image" && text.type === "text" && text.text.includes(path), "an image and a line", res.content.map((c) => c.type));
  return [res.structuredContent, image.mimeType, Buffer.from(image.data, "base64")];
}
let [media, mime, bytes] = await picture("media/dot.png");
check(mime === "image/png" && pngSize(bytes).join("x") === "1x1" && media.kind === "image", "a 1x1 PNG", media);
[media, mime, bytes] = await picture("media/photo.jpg");
check(mime === "image/jpeg" && jpegSize(bytes).join("x") === "64x48", "a JPEG comes back as one", media);
[media, mime, bytes] = await picture("media/shot.png");
const [w, h] = pngSize(bytes);
check(media.width === 5000 && media.height === 4000, "the original size is told", media);
check(w === 1568 && h >= 1253 && h <= 1255 && media.returned_width === w && media.returned_height === h, "20 megapixels come back at 1568 px", [w, h]);
await refused("read_media", { ...p, path: "media/cut.png" }, "image_invalid");
await refused("read_media", { ...p, path: "media/bomb.png" }, "image_too_large");
await refused("read_media", { ...p, path: "media/id_rsa.png" }, "path_shielded");
await refused("read_media", { ...p, path: "README.md" }, "text_file");
await refused("read_file", { ...p, path: "media/dot.png" }, "binary_file");
const range = await call("read_media", { ...p, path: "media/blob.bin", offset: 100, length: 50 });
check(!range.isError && range.content[0].type === "resource", "a byte range is a resource", range);
const { resource } = range.content[0];
check(resource.uri.startsWith("sluice://proj_") && resource.uri.endsWith("/media/blob.bin"), "the blob's URI", resource.uri);
check(resource.mimeType === "application/octet-stream", "the blob's type", resource);
const want = Buffer.from(Array.from({ length: 50 }, (_, i) => (100 + i) % 251));
check(Buffer.from(resource.blob, "base64").equals(want), "the blob holds the bytes asked for", resource.blob);
check(range.structuredContent.next_offset === 150 && range.structuredContent.size === 3000, "the next offset and the size", range.structuredContent);

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
