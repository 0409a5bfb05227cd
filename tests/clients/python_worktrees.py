"""Worktrees as the official Python MCP SDK sees them over Streamable HTTP: two linked worktrees
made from one project with `git_worktree`, each its own project (`<project>@<name>`), edited and
committed in parallel by two tokens (one scoped to the project only, which sees its worktrees
through it), each commit on its own branch while the project's own tree stays as it was;
removing one asks the user (approved through the CLI), keeps its branch and unauthorizes it.
Exits non-zero on the first failed check.

Environment: SLUICE_TOKEN (full profile, every project), SLUICE_SCOPED_TOKEN (full profile,
scoped to the project), SLUICE_CANARY, SLUICE_DATA_DIR.
Arguments: --url, --project, --sluice (the CLI binary), --repo (the project folder).
"""

import argparse
import asyncio
import os
import subprocess

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import common
from common import approving, call, check, ok, refused, sluice


def bearer(token):
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})


def plain_git(repo, *argv):
    out = subprocess.run(["git", "-C", repo, *argv], check=True, capture_output=True, text=True,
                         env={**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null"})
    return out.stdout


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--project", required=True)
    ap.add_argument("--sluice", required=True)
    ap.add_argument("--repo", required=True)
    args = ap.parse_args()
    project, repo, binary = args.project, args.repo, args.sluice
    p = {"project": project}
    head_before = plain_git(repo, "rev-parse", "HEAD").strip()
    readme_before = open(os.path.join(repo, "README.md")).read()

    async with Client(streamable_http_client(args.url, http_client=bearer(
            os.environ["SLUICE_TOKEN"])), cache=None) as a, \
            Client(streamable_http_client(args.url, http_client=bearer(
                os.environ["SLUICE_SCOPED_TOKEN"])), cache=None) as b:
        one = await ok(a, "git_worktree", {**p, "name": "one", "create_branch": True})
        check(one["project"] == f"{project}@one" and one["branch"] == "one", "made one", one)
        two = await ok(b, "git_worktree", {**p, "name": "two", "create_branch": True})
        check(two["project"] == f"{project}@two", "the scoped token made two", two)
        for client in (a, b):
            names = {x["name"] for x in (await ok(client, "list_projects", {}))["projects"]}
            check({project, f"{project}@one", f"{project}@two"} <= names, "both are listed", names)
        # The same name again, and a branch checked out elsewhere, are refused cleanly.
        await refused(a, "git_worktree", {**p, "name": "one", "create_branch": True}, "conflict")
        await refused(a, "git_worktree", {**p, "name": "three", "branch": "one"}, "conflict")

        async def work(client, name, n):
            wp = {"project": f"{project}@{name}"}
            for i in range(n):
                await ok(client, "write_file", {**wp, "path": f"{name}-{i}.txt",
                                                "content": f"{name} {i}\n"})
                if i == 0:
                    await ok(client, "edit_file", {**wp, "path": "README.md", "edits": [
                        {"old_text": "hello world", "new_text": f"hello {name}"}]})
                done = await ok(client, "git_commit", {**wp, "message": f"{name} {i}", "all": True})
                check(done["branch"] == name, f"{name}'s commit is on branch {name}", done)
            return wp

        wp1, wp2 = await asyncio.gather(work(a, "one", 3), work(b, "two", 3))
        for client, wp, name, other in ((a, wp1, "one", "two"), (b, wp2, "two", "one")):
            log = (await ok(client, "git_log", {**wp, "max_count": 10}))["commits"]
            subjects = [c["subject"] for c in log]
            check(subjects[:3] == [f"{name} 2", f"{name} 1", f"{name} 0"],
                  f"{name}'s history is its own", subjects)
            check(not any(s.startswith(other) for s in subjects), "no cross-talk", subjects)
            status = await ok(client, "git_status", wp)
            check(status["branch"] == name and status["entries"] == [], "clean", status)
        # The project's own checkout did not move and its files are as they were.
        check(plain_git(repo, "rev-parse", "HEAD").strip() == head_before, "parent HEAD kept")
        check(plain_git(repo, "branch", "--show-current").strip() == "main", "still on main")
        check(open(os.path.join(repo, "README.md")).read() == readme_before, "README untouched")
        check(not os.path.exists(os.path.join(repo, "one-0.txt")), "no worktree file leaked")
        refs = await ok(a, "git_refs", p)
        names = {x["name"] for x in refs["branches"]}
        check({"main", "one", "two"} <= names, "the branches are the project's", refs)

        # Removing asks like a delete; approved through the CLI, the branch stays.
        task = asyncio.create_task(call(a, "git_worktree", {**p, "action": "remove", "name": "one"}))
        res, approved = await approving(binary, task, "git_worktree", shown="remove worktree")
        check(len(approved) == 1, "removing asked once", approved)
        check(not res.is_error, "removed", res.structured_content)
        check(res.structured_content["branch"] == "one", "names the kept branch",
              res.structured_content)
        names = {x["name"] for x in (await ok(b, "list_projects", {}))["projects"]}
        check(f"{project}@one" not in names and f"{project}@two" in names, "one is gone", names)
        await refused(a, "read_file", {**wp1, "path": "README.md"}, "project_not_found")
        refs = await ok(a, "git_refs", p)
        check("one" in {x["name"] for x in refs["branches"]}, "branch one stays", refs)
        log = (await ok(a, "git_log", {**p, "rev": "one", "max_count": 1}))["commits"]
        check(log and log[0]["subject"] == "one 2", "its commits stay on the branch", log)

        # A worktree with uncommitted changes is not removed.
        await ok(b, "write_file", {**wp2, "path": "draft.txt", "content": "unsaved\n"})
        why = await refused(b, "git_worktree", {**p, "action": "remove", "name": "two"},
                            "conflict")
        check("uncommitted" in why["message"], "says why", why)
    # The user removes the other one from the CLI once it is clean.
    os.remove(os.path.join(os.path.dirname(repo), os.path.basename(repo) + ".worktrees", "two",
                           "draft.txt"))
    code, out, err = await sluice(binary, "project", "remove", f"{project}@two")
    check(code == 0 and "branch stays" in out, "sluice project remove removes it", out + err)
    check(not os.path.exists(os.path.join(os.path.dirname(repo),
                                          os.path.basename(repo) + ".worktrees", "two")),
          "the folder is gone")
    check(not os.path.exists(os.path.join(os.path.dirname(repo),
                                          os.path.basename(repo) + ".worktrees")),
          "the folder of worktrees goes with the last one")
    check("two" in plain_git(repo, "branch", "--list", "two"), "branch two stays")
    print(f"OK {common.no_canary_anywhere()} checks")


asyncio.run(main())
