"""Git writes as the official Python MCP SDK (written by others) sees them over Streamable HTTP:
commits by the user's own git identity that never stage a protected file, branches, tags, a
switch and a stash, each undone (and redone) with `restore` by its operation id; deletions and
history rewrites ask the user, a switch that brings an editor task asks too, an approval is
bound to the state it was given for, and a review token cannot write. The repository is planted
with programs git could run (hooks, fsmonitor, filters, signing, editor); the Rust side checks
none ran. Exits non-zero on the first failed check.

Environment: SLUICE_TOKEN (full profile), SLUICE_REVIEW_TOKEN, SLUICE_CANARY, SLUICE_DATA_DIR.
Arguments: --url, --project, --sluice (the CLI binary), --repo (the project folder, for the
user's own edits and config changes).
"""

import argparse
import asyncio
import json
import os
import subprocess

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import common
from common import call, check, ok, refused, sluice

WRITES = ["git_commit", "git_branch", "git_tag", "git_switch", "git_stash"]


async def approving(client, binary, tool, args, shown=None, before=None):
    """Calls `tool`, approving (as the user, through the CLI) what it asks while it runs; checks
    `approvals show` says `shown`; runs `before()` just before approving. Returns the result."""
    task = asyncio.create_task(call(client, tool, args))
    asked = 0
    while not task.done():
        code, out, err = await sluice(binary, "approvals", "list", "--json")
        check(code == 0, "approvals list works", err)
        for a in json.loads(out):
            if a["state"] != "pending" or a["tool"] != tool:
                continue
            if shown is not None:
                code, text, err = await sluice(binary, "approvals", "show", a["id"])
                check(code == 0 and shown in text, f"the approval says {shown!r}", text + err)
            if before:
                before()
            code, _, err = await sluice(binary, "approvals", "approve", a["id"])
            check(code == 0, "approvals approve works", err)
            asked += 1
        await asyncio.wait({task}, timeout=0.1)
    check(asked == 1, f"{tool} asked the user once", asked)
    return task.result()


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--project", required=True)
    ap.add_argument("--sluice", required=True)
    ap.add_argument("--repo", required=True)
    args = ap.parse_args()
    p = {"project": args.project}
    repo = args.repo
    binary = args.sluice

    def user_git(*argv):
        """The user's own git (config only: it runs no hook or fsmonitor)."""
        subprocess.run(["git", "-C", repo, "-c", "core.fsmonitor=false", *argv], check=True,
                       env={**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null"})

    def bearer(token):
        return httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})

    async with Client(streamable_http_client(args.url, http_client=bearer(
            os.environ["SLUICE_REVIEW_TOKEN"])), cache=None) as reviewer:
        refs = await ok(reviewer, "git_refs", p)
        check(refs["current"] == "main", "a review token lists refs", refs)
        for tool in WRITES:
            await refused(reviewer, tool, {**p, "message": "x", "name": "x", "branch": "x"},
                          "outside_profile")

    http = bearer(os.environ["SLUICE_TOKEN"])
    async with Client(streamable_http_client(args.url, http_client=http), cache=None) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in WRITES:
            check(tools[name].annotations.read_only_hint is False, f"{name} is a write", name)
        check(tools["git_refs"].annotations.read_only_hint is True, "git_refs only reads")

        # Bad requests change nothing.
        await refused(client, "git_commit", {**p, "message": "  "}, "invalid_argument")
        await refused(client, "git_commit", {**p, "message": "x"}, "conflict")  # nothing staged
        await refused(client, "git_commit", {**p, "message": "x", "paths": [".env"]},
                      "path_shielded")
        for name in ["--force", "a..b", "x:y", "-", "HEAD", "a/.hidden", "end.lock", "\u202eevil"]:
            await refused(client, "git_branch", {**p, "name": name}, "invalid_argument")
        for start in ["HEAD:.env", "--all", "nope"]:
            await refused(client, "git_branch", {**p, "name": "b", "start_point": start},
                          "invalid_argument")

        # A commit of named files, by the user's identity, with no program run (the Rust side
        # checks the marks): notes.txt is selected by a filter that would run one.
        await ok(client, "write_file", {**p, "path": "notes.txt", "content": "plain notes\n"})
        first = await ok(client, "git_commit", {**p, "message": "Add notes\n\nBody.",
                                                "paths": ["README.md", "notes.txt"]})
        check(sorted(first["files"]) == ["README.md", "notes.txt"], "both files committed", first)
        check(first["operation_id"].startswith("git_") and first["branch"] == "main", "an op id",
              first)
        log = await ok(client, "git_log", {**p, "max_count": 2})
        top = log["commits"][0]
        check(top["id"] == first["head"] and top["subject"] == "Add notes", "it is HEAD", log)
        check(top["author_name"] == "Grace User", "by the user's configured identity", top)
        shown = await ok(client, "git_show", {**p, "rev": "HEAD"})
        check("plain notes" in json.dumps(shown), "the content, unfiltered", shown)

        # Everything else with `all`: the protected .env is never staged.
        second = await ok(client, "git_commit", {**p, "message": "Add the rest", "all": True})
        check(".env" not in second["files"] and ".gitattributes" in second["files"],
              "all stages every visible change and no protected file", second)
        status = await ok(client, "git_status", p)
        check(status["hidden_files"] >= 1 and status["entries"] == [],
              "the .env stays untracked, out of sight", status)

        # Undo the commit: the branch moves back and the changes stay, staged. Redo it.
        undo = await ok(client, "git_log", {**p, "max_count": 1})
        check(undo["commits"][0]["id"] == second["head"], "before the undo", undo)
        undone = await approving(client, binary, "restore",
                                 {**p, "operation_id": second["operation_id"]},
                                 shown="move branch main back")
        check(not undone.is_error, "the commit is undone", undone.structured_content)
        undone = undone.structured_content
        check(undone["head"] == first["head"], "HEAD is the parent again", undone)
        status = await ok(client, "git_status", p)
        staged = {e["path"]: e["index_status"] for e in status["entries"]}
        check(staged.get(".gitattributes") == "A", "its changes are still staged", status)
        redo = await approving(client, binary, "restore",
                               {**p, "operation_id": undone["operation_id"]})
        check(not redo.is_error and redo.structured_content["head"] == second["head"],
              "the undo is undone", redo.structured_content)
        await refused(client, "restore", {**p, "operation_id": undone["operation_id"]},
                      "conflict")  # the branch is no longer where the undo left it
        await refused(client, "restore", {**p, "operation_id": "git_" + "0" * 32},
                      "invalid_argument")
        await refused(client, "restore", {**p, "operation_id": "git_../../x"},
                      "invalid_argument")

        # Branches: create, list, delete (asks like a delete), re-create with restore.
        made = await ok(client, "git_branch", {**p, "name": "feature"})
        await refused(client, "git_branch", {**p, "name": "feature"}, "conflict")
        refs = await ok(client, "git_refs", p)
        names = {b["name"]: b["commit"] for b in refs["branches"]}
        check(names.get("feature") == second["head"] and refs["current"] == "main", "listed",
              refs)
        await refused(client, "git_branch", {**p, "action": "delete", "name": "main"}, "conflict")
        gone = await approving(client, binary, "git_branch",
                               {**p, "action": "delete", "name": "feature"},
                               shown="delete branch feature")
        check(not gone.is_error, "the branch is deleted", gone.structured_content)
        refs = await ok(client, "git_refs", p)
        check("feature" not in {b["name"] for b in refs["branches"]}, "gone", refs)
        back = await ok(client, "restore",
                        {**p, "operation_id": gone.structured_content["operation_id"]})
        refs = await ok(client, "git_refs", p)
        check("feature" in {b["name"] for b in refs["branches"]}, "re-created", [back, refs])
        check(made["operation_id"] != back["operation_id"], "every write has its own id")

        # Switch, a dirty tree refused, stash push and pop.
        sw = await ok(client, "git_switch", {**p, "branch": "feature"})
        check(sw["branch"] == "feature", "switched", sw)
        await ok(client, "write_file", {**p, "path": "README.md", "content": "wip\n",
                                        "expected_hash": (await ok(client, "read_file", {
                                            **p, "path": "README.md"}))["hash"]})
        await refused(client, "git_switch", {**p, "branch": "main"}, "conflict")
        stashed = await ok(client, "git_stash", {**p, "message": "wip readme"})
        check(stashed["created"] and stashed["operation_id"] is None, "stashed", stashed)
        refs = await ok(client, "git_refs", p)
        check(len(refs["stashes"]) == 1 and "wip readme" in refs["stashes"][0]["subject"],
              "the stash is listed", refs)
        check((await ok(client, "git_status", p))["entries"] == [], "the tree is clean")
        popped = await ok(client, "git_stash", {**p, "action": "pop"})
        check(popped["files"] == ["README.md"], "popped", popped)
        readme = await ok(client, "read_file", {**p, "path": "README.md"})
        check(readme["content"] == "wip\n", "the change is back", readme)
        await ok(client, "git_commit", {**p, "message": "wip", "all": True})

        # A branch that brings an editor task asks first, and says so; so does switching back.
        theirs = await approving(client, binary, "git_switch", {**p, "branch": "theirs"},
                                 shown=".vscode/tasks.json")
        check(not theirs.is_error and theirs.structured_content["branch"] == "theirs",
              "switched after approval", theirs.structured_content)
        returned = await approving(client, binary, "restore", {
            **p, "operation_id": theirs.structured_content["operation_id"]})
        check(returned.structured_content["branch"] == "feature", "switched back",
              returned.structured_content)

        # Tags: annotated and lightweight; deleting asks; restore re-creates.
        v1 = await ok(client, "git_tag", {**p, "name": "v1", "message": "release one"})
        await ok(client, "git_tag", {**p, "name": "v0", "target": "HEAD~1"})
        refs = await ok(client, "git_refs", p)
        tags = {t["name"]: t for t in refs["tags"]}
        check(tags["v1"]["commit"] == v1["head"] and tags["v1"]["subject"] == "release one",
              "the annotated tag points at HEAD", refs)
        dropped = await approving(client, binary, "git_tag",
                                  {**p, "action": "delete", "name": "v1"})
        await ok(client, "restore", {**p, "operation_id": dropped.structured_content["operation_id"]})
        refs = await ok(client, "git_refs", p)
        check("v1" in {t["name"] for t in refs["tags"]}, "the tag is back", refs)

        # Signing the user asked for is never silently dropped, nor done by a program.
        user_git("config", "commit.gpgsign", "true")
        await ok(client, "write_file", {**p, "path": "signed.md", "content": "s\n"})
        await refused(client, "git_commit", {**p, "message": "s", "all": True}, "forbidden")
        user_git("config", "--unset", "commit.gpgsign")

        # An approval is for the state it was given on: a file that changes before the user
        # approves makes the commit refuse, and nothing is committed.
        code, _, err = await sluice(binary, "project", "policy", args.project, "--writes", "ask")
        check(code == 0, "the user asks before writes", err)
        head = (await ok(client, "git_log", {**p, "max_count": 1}))["commits"][0]["id"]

        def edit():
            with open(os.path.join(repo, "signed.md"), "w") as f:
                f.write("changed under the approval\n")

        late = await approving(client, binary, "git_commit",
                               {**p, "message": "s", "all": True}, before=edit)
        check(late.is_error and late.structured_content["code"] == "conflict",
              "refused after the change", late.structured_content)
        after = (await ok(client, "git_log", {**p, "max_count": 1}))["commits"][0]["id"]
        check(after == head, "nothing was committed", after)
    print(f"OK {common.no_canary_anywhere()} checks")


asyncio.run(main())
