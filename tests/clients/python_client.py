"""Drives Sluice with the official Python MCP SDK (written by others), over Streamable HTTP or
through `sluice stdio`, and checks every tool and a set of attacks. Exits non-zero on the first
failed check, printing what was expected and what came back.

Environment: SLUICE_TOKEN (the bearer token), SLUICE_CANARY (a string that must never appear in
any response), and for stdio SLUICE_DATA_DIR. Arguments: --transport http|stdio, --mode
auto|legacy, --url (http) or --sluice BIN (stdio), --project NAME.
"""

import argparse
import asyncio
import base64
import getpass
import json
import os
import struct
import zlib

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

import common
from common import call, check, ok, refused

READ_TOOLS = {
    "list_projects", "server_info", "system_info", "list_directory", "stat", "read_file",
    "read_media", "find_files", "search_text", "git_status", "git_diff", "git_log", "git_show", "list_backups",
    "git_refs", "list_checkpoints", "code_outline", "code_symbols", "code_definition",
    "code_references",
}
WRITE_TOOLS = {
    "write_file", "edit_file", "apply_patch", "move_path", "create_directory", "delete_path",
    "restore", "git_commit", "git_branch", "git_tag", "git_switch", "git_stash", "git_worktree",
    "create_checkpoint", "restore_checkpoint",
}
# Execution: starting and cancelling change things; looking at jobs does not.
EXEC_READ_TOOLS = {"job_status", "job_logs", "list_jobs"}
EXEC_WRITE_TOOLS = {
    "run_command", "run_tests", "run_build", "start_job", "cancel_job", "write_job_input",
    "fetch_from_job",
    # The project's language server: starting one runs the project's code in its sandbox.
    "code_hover", "code_diagnostics", "code_rename",
}
READ_TOOLS = READ_TOOLS | EXEC_READ_TOOLS
# The assistant's own panic switch: lowers its token's privileges, never raises them.
SELF_TOOLS = {"drop_privileges"}
EXPECTED_TOOLS = READ_TOOLS | WRITE_TOOLS | EXEC_WRITE_TOOLS | SELF_TOOLS


def png_size(data):
    """A PNG's width and height, after checking it decodes: its IDAT inflates to exactly the
    rows its header declares."""
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "a PNG signature", data[:8])
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        check(zlib.crc32(kind + body) == struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0],
              "a PNG chunk's CRC", kind)
        if kind == b"IHDR":
            header = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    width, height, depth, color = header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[color]
    check(len(zlib.decompress(idat)) == height * (1 + width * channels * depth // 8),
          "the PNG's pixels are all there", (width, height, depth, color))
    return width, height


def jpeg_size(data):
    """A JPEG's width and height from its frame header."""
    check(data[:2] == b"\xff\xd8", "a JPEG start marker", data[:2])
    pos = 2
    while pos < len(data):
        marker, (n,) = data[pos + 1], struct.unpack(">H", data[pos + 2:pos + 4])
        if 0xC0 <= marker <= 0xC3:
            height, width = struct.unpack(">HH", data[pos + 5:pos + 9])
            return width, height
        pos += 2 + n
    check(False, "a JPEG frame header", data[:64])


async def media(client, p):
    """read_media through the SDK: pictures as image content it decodes, bytes as a blob."""
    async def image(path, args=None):
        res = await call(client, "read_media", {**p, "path": path, **(args or {})})
        check(not res.is_error, f"read_media({path}) succeeds", res.structured_content)
        picture, text = res.content
        check(picture.type == "image" and text.type == "text", "an image and a line", res.content)
        check(path in text.text, "the line names the file", text.text)
        return res.structured_content, picture.mime_type, base64.b64decode(picture.data)

    out, mime, data = await image("media/dot.png")
    check(mime == "image/png" and png_size(data) == (1, 1), "a 1x1 PNG comes back", out)
    check((out["width"], out["height"], out["kind"]) == (1, 1, "image"), "its size", out)
    out, mime, data = await image("media/photo.jpg")
    check(mime == "image/jpeg" and jpeg_size(data) == (64, 48), "a JPEG comes back as one", out)
    out, mime, data = await image("media/shot.png")
    w, h = png_size(data)
    check((out["width"], out["height"]) == (5000, 4000), "the original size is told", out)
    check(w == 1568 and 1253 <= h <= 1255 and (w, h) == (out["returned_width"],
          out["returned_height"]), "20 megapixels come back at 1568 px", (w, h, out))
    out, mime, data = await image("media/shot.png", {"max_dimension": 200})
    check(png_size(data)[0] == 200, "a smaller bound on request", out)

    await refused(client, "read_media", {**p, "path": "media/cut.png"}, {"image_invalid"})
    await refused(client, "read_media", {**p, "path": "media/bomb.png"}, {"image_too_large"})
    await refused(client, "read_media", {**p, "path": "media/id_rsa.png"}, {"path_shielded"})
    await refused(client, "read_media", {**p, "path": ".env"}, {"path_shielded"})
    await refused(client, "read_media", {**p, "path": "../outside.txt"},
                  {"path_invalid", "path_outside_project"})
    await refused(client, "read_media", {**p, "path": "README.md"}, {"text_file"})
    rf = await refused(client, "read_file", {**p, "path": "media/dot.png"}, {"binary_file"})
    check("read_media" in rf["message"], "read_file points to read_media", rf)

    res = await call(client, "read_media", {**p, "path": "media/blob.bin", "offset": 100,
                                            "length": 50})
    check(not res.is_error, "read_media of a byte range succeeds", res.structured_content)
    blob, text = res.content
    check(blob.type == "resource" and text.type == "text", "a resource and a line", res.content)
    check(str(blob.resource.uri).startswith("sluice://proj_")
          and str(blob.resource.uri).endswith("/media/blob.bin"), "the blob's URI", blob.resource)
    check(blob.resource.mime_type == "application/octet-stream", "the blob's type", blob.resource)
    check(base64.b64decode(blob.resource.blob) == bytes(i % 251 for i in range(100, 150)),
          "the blob holds the bytes asked for", blob.resource.blob)
    out = res.structured_content
    check((out["offset"], out["length"], out["next_offset"], out["size"]) == (100, 50, 150, 3000),
          "the range, the next offset and the size", out)


async def exercise(client, project, mode):
    if mode == "auto":
        check(client.protocol_version == "2026-07-28", "auto mode negotiates 2026-07-28",
              client.protocol_version)
    else:
        check(client.protocol_version == "2025-11-25", "legacy mode negotiates 2025-11-25",
              client.protocol_version)
    info = client.server_info
    check(info is not None and info.name == "sluice", "server identifies as sluice", info)

    tools = (await client.list_tools()).tools
    names = {t.name for t in tools}
    check(names == EXPECTED_TOOLS, "the tool list", sorted(names))
    for t in tools:
        check(t.annotations is not None
              and t.annotations.read_only_hint is (t.name in READ_TOOLS),
              f"{t.name} is annotated read-only exactly when it is", t.annotations)

        check(t.output_schema is not None, f"{t.name} declares an output schema", t.name)
        for prop, schema in (t.input_schema.get("properties") or {}).items():
            check("description" in schema or "$ref" in schema or "allOf" in schema,
                  f"{t.name}.{prop} is described", schema)

    projects = (await ok(client, "list_projects", {}))["projects"]
    check(any(p["name"] == project for p in projects), "the project is listed", projects)
    await ok(client, "server_info", {})
    sysinfo = await ok(client, "system_info", {})
    blob = json.dumps(sysinfo)
    check("/" not in blob.replace("x86_64", "") or sysinfo.get("os_version"), "system_info", sysinfo)
    check(getpass.getuser() not in blob or getpass.getuser() in ("root",) and "root" not in blob,
          "system_info has no user name", sysinfo)

    p = {"project": project}
    listing = await ok(client, "list_directory", {**p, "path": ".", "depth": 2})
    paths = {e["path"] for e in listing["entries"]}
    check({"README.md", "src", "src/main.rs"} <= paths, "list_directory shows the files", paths)
    check(".env" not in paths, "list_directory hides .env", paths)

    st = await ok(client, "stat", {**p, "path": "README.md"})
    check(st["kind"] == "file", "stat kind", st)

    rf = await ok(client, "read_file", {**p, "path": "README.md"})
    check("hello world" in rf["content"], "read_file content", rf)
    rf = await ok(client, "read_file", {**p, "path": "README.md", "start_line": 2, "max_lines": 1})
    check(rf["content"].strip() == "hello world", "read_file line range", rf)

    await media(client, p)

    ff = await ok(client, "find_files", {**p, "globs": ["**/*.rs"]})
    check([f["path"] for f in ff["matches"]] == ["src/main.rs"], "find_files", ff)

    st = await ok(client, "search_text", {**p, "pattern": "hello"})
    hits = {m["path"] for m in st["matches"]}
    check(hits == {"README.md", "src/main.rs"}, "search_text hits", st)
    st = await ok(client, "search_text", {**p, "pattern": "SECRET="})
    check(st["matches"] == [], "search_text never looks inside .env", st)

    gs = await ok(client, "git_status", p)
    check(any(e["path"] == "README.md" for e in gs["entries"]), "git_status", gs)
    gd = await ok(client, "git_diff", p)
    check(any("+changed" in (f.get("patch") or "") for f in gd["files"]), "git_diff", gd)
    gl = await ok(client, "git_log", p)
    check(gl["commits"][0]["subject"] == "first commit", "git_log", gl)
    gsh = await ok(client, "git_show", {**p, "rev": "HEAD"})
    check(any(f["path"] == "src/main.rs" for f in gsh["files"]), "git_show", gsh)

    # Attacks through a real client: every one refused, no canary anywhere.
    outside = {"path_invalid", "path_outside_project", "not_found"}
    for bad in ["../outside.txt", "/etc/passwd", "..\\..\\outside.txt", "src/../../outside.txt",
                "../proj_evil/x.txt", "C:\\Windows\\win.ini", "\\\\evil\\share\\x",
                "README.md:stream", "file:///etc/passwd", "%2e%2e/outside.txt", "~/outside.txt",
                "$HOME/x", "CON", "src/main.rs. "]:
        await refused(client, "read_file", {**p, "path": bad}, outside | {"path_shielded"})
    await refused(client, "read_file", {**p, "path": ".env"}, {"path_shielded"})
    await refused(client, "read_file", {**p, "path": ".git/config"}, {"path_shielded"})
    await refused(client, "read_file", {"project": "no-such-project", "path": "README.md"},
                  {"project_not_found"})
    await refused(client, "git_log", {**p, "rev": "--output=/tmp/owned"}, {"invalid_argument"})
    await refused(client, "search_text", {**p, "pattern": "(unclosed"}, {"invalid_argument"})
    st = await ok(client, "search_text", {**p, "pattern": "(a+)+$"})


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--transport", choices=["http", "stdio"], required=True)
    ap.add_argument("--mode", choices=["auto", "legacy"], default="auto")
    ap.add_argument("--url")
    ap.add_argument("--sluice")
    ap.add_argument("--project", default="demo")
    args = ap.parse_args()
    token = os.environ["SLUICE_TOKEN"]
    if args.transport == "http":
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        server = streamable_http_client(args.url, http_client=http)
    else:
        server = StdioServerParameters(
            command=args.sluice, args=["stdio"],
            env={"SLUICE_TOKEN": token, "SLUICE_DATA_DIR": os.environ["SLUICE_DATA_DIR"],
                 "PATH": os.environ.get("PATH", "")},
        )
    async with Client(server, mode=args.mode, cache=None) as client:
        await exercise(client, args.project, args.mode)
    print(f"OK {common.no_canary_anywhere()} checks")


asyncio.run(main())
