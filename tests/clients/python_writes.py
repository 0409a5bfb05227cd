"""Drives Sluice's write tools and approvals with the official Python MCP SDK, over Streamable
HTTP or through `sluice stdio`. The human side of each approval is played through the real CLI
(`sluice approvals list/approve/deny`), as a user at a terminal would. Exits non-zero on the
first failed check.

Environment: SLUICE_TOKEN, SLUICE_DATA_DIR, SLUICE_CANARY. Arguments: --transport http|stdio,
--url (http), --sluice BIN, --project (read-write), --readonly-project.
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


async def pending(binary, tool, deadline=20.0):
    """Waits (polling the CLI, as a user would look) until an approval for `tool` is pending."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while loop.time() < end:
        code, out, err = await sluice(binary, "approvals", "list", "--json")
        check(code == 0, "approvals list works", err)
        waiting = [a for a in json.loads(out) if a["state"] == "pending" and a["tool"] == tool]
        if waiting:
            return waiting[0]
        await asyncio.sleep(0.1)
    check(False, f"an approval for {tool} appears")


async def approving(client, binary, tool, args):
    """Calls `tool`, approving (as the user, through the CLI) whatever it asks while it runs."""
    task = asyncio.create_task(call(client, tool, args))
    while not task.done():
        code, out, err = await sluice(binary, "approvals", "list", "--json")
        check(code == 0, "approvals list works", err)
        for a in json.loads(out):
            if a["state"] == "pending" and a["tool"] == tool:
                await sluice(binary, "approvals", "approve", a["id"])
        await asyncio.wait({task}, timeout=0.1)
    res = task.result()
    check(not res.is_error, f"{tool} succeeds once approved", res.structured_content)
    return res.structured_content


async def exercise(client, binary, project, readonly):
    p = {"project": project}
    created = await ok(client, "write_file", {**p, "path": "notes/todo.txt",
                                               "content": "one\ntwo\n", "create_parents": True})
    check(created["operation_id"].startswith("op_"), "an operation id", created)
    again = await refused(client, "write_file", {**p, "path": "notes/todo.txt", "content": "x"},
                          "conflict")
    check("hash" in again["message"], "the conflict says how to recover", again)
    rf = await ok(client, "read_file", {**p, "path": "notes/todo.txt"})
    await refused(client, "write_file", {**p, "path": "notes/todo.txt", "content": "x",
                                         "expected_hash": "blake3:" + "0" * 64}, "conflict")
    await ok(client, "write_file", {**p, "path": "notes/todo.txt", "content": "one\ntwo\nthree\n",
                                     "expected_hash": rf["hash"]})
    await ok(client, "edit_file", {**p, "path": "notes/todo.txt",
                                    "edits": [{"old_text": "two", "new_text": "TWO"}]})
    await refused(client, "edit_file", {**p, "path": "notes/todo.txt",
                                         "edits": [{"old_text": "absent", "new_text": "x"}]},
                  "invalid_argument")
    patch = ("*** Begin Patch\n*** Update File: notes/todo.txt\n@@\n one\n-TWO\n+2\n three\n"
             "*** Add File: notes/new.md\n+# New\n*** End Patch\n")
    out = await ok(client, "apply_patch", {**p, "patch": patch})
    check(len(out["files"]) == 2, "apply_patch reports each file", out)
    diff = ("diff --git a/notes/new.md b/notes/new.md\n--- a/notes/new.md\n+++ b/notes/new.md\n"
            "@@ -1 +1,2 @@\n # New\n+more\n")
    await ok(client, "apply_patch", {**p, "patch": diff})
    rf = await ok(client, "read_file", {**p, "path": "notes/new.md"})
    check(rf["content"] == "# New\nmore\n", "the unified diff applied", rf)
    await ok(client, "create_directory", {**p, "path": "build/out", "parents": True})
    # Moving a file away from its path counts as a delete there: it asks first.
    moved = await approving(client, binary, "move_path",
                            {**p, "from": "notes/new.md", "to": "build/new.md"})
    backups = await ok(client, "list_backups", p)
    check(len(backups["operations"]) >= 1, "backups are listed", backups)
    await approving(client, binary, "restore", {**p, "operation_id": moved["operation_id"]})

    await ok(client, "stat", {**p, "path": "notes/new.md"})
    await refused(client, "write_file", {**p, "path": ".env", "content": "X=1"}, "path_shielded")
    await refused(client, "write_file", {**p, "path": "../escape.txt", "content": "x"}, "path_invalid")
    await refused(client, "write_file", {"project": readonly, "path": "x.txt", "content": "x"},
                  "read_only_project")

    # A delete waits for the user; here the user approves it from the CLI.
    async def approve():
        a = await pending(binary, "delete_path")
        check("notes/todo.txt" in a["summary"], "the prompt shows the exact path", a)
        code, _, err = await sluice(binary, "approvals", "approve", a["id"])
        check(code == 0, "approve works", err)
        code, _, err = await sluice(binary, "approvals", "approve", a["id"])
        check(code != 0 and "already" in err, "an approval is decided once", err)
    res, _ = await asyncio.gather(call(client, "delete_path", {**p, "path": "notes/todo.txt"}),
                                  approve())
    check(not res.is_error, "the approved delete ran", res.structured_content)
    await refused(client, "stat", {**p, "path": "notes/todo.txt"}, "not_found")

    # Denied, with a reason that reaches the assistant. The client also claims consent in the
    # arguments and in _meta: neither approves anything (AP-06).
    async def deny():
        a = await pending(binary, "delete_path")
        code, _, err = await sluice(binary, "approvals", "deny", a["id"], "--reason",
                                    "keep the docs")
        check(code == 0, "deny works", err)
    res, _ = await asyncio.gather(
        call(client, "delete_path", {**p, "path": "notes/new.md", "approved": True},
             meta={"userConsent": True, "approved": True}),
        deny())
    check(res.is_error and res.structured_content["code"] == "denied", "the denial returns",
          res.structured_content)
    check("keep the docs" in res.structured_content["message"], "with the user's reason",
          res.structured_content)
    await ok(client, "stat", {**p, "path": "notes/new.md"})


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--transport", choices=["http", "stdio"], required=True)
    ap.add_argument("--url")
    ap.add_argument("--sluice", required=True)
    ap.add_argument("--project", default="demo")
    ap.add_argument("--readonly-project", default="other")
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
        await exercise(client, args.sluice, args.project, args.readonly_project)
    print(f"OK {common.no_canary_anywhere()} checks")


asyncio.run(main())
