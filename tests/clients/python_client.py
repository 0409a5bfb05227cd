"""Drives Sluice with the official Python MCP SDK (written by others), over Streamable HTTP or
through `sluice stdio`, and checks every tool and a set of attacks. Exits non-zero on the first
failed check, printing what was expected and what came back.

Environment: SLUICE_TOKEN (the bearer token), SLUICE_CANARY (a string that must never appear in
any response), and for stdio SLUICE_DATA_DIR. Arguments: --transport http|stdio, --mode
auto|legacy, --url (http) or --sluice BIN (stdio), --project NAME.
"""

import argparse
import asyncio
import getpass
import json
import os

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

import common
from common import call, check, ok, refused

READ_TOOLS = {
    "list_projects", "server_info", "system_info", "list_directory", "stat", "read_file",
    "find_files", "search_text", "git_status", "git_diff", "git_log", "git_show", "list_backups",
}
WRITE_TOOLS = {
    "write_file", "edit_file", "apply_patch", "move_path", "create_directory", "delete_path",
    "restore",
}
# Execution: starting and cancelling change things; looking at jobs does not.
EXEC_READ_TOOLS = {"job_status", "job_logs", "list_jobs"}
EXEC_WRITE_TOOLS = {"run_command", "run_tests", "run_build", "start_job", "cancel_job"}
READ_TOOLS = READ_TOOLS | EXEC_READ_TOOLS
# The assistant's own panic switch: lowers its token's privileges, never raises them.
SELF_TOOLS = {"drop_privileges"}
EXPECTED_TOOLS = READ_TOOLS | WRITE_TOOLS | EXEC_WRITE_TOOLS | SELF_TOOLS


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
