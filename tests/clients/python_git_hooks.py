"""Git hooks the user allowed, as the official Python MCP SDK sees them over Streamable HTTP:
off by default (a commit runs none); allowed for the project, `git_commit` runs the hooks of
`core.hooksPath` (pre-commit, prepare-commit-msg, commit-msg, post-commit), and `git_switch` its
post-checkout, each as a job of the token that `list_jobs` shows, with a checkpoint taken first; a failing pre-commit
stops the commit with `hook_failed` and its output, a pre-commit that restages a file (a
formatter) stops it too and the next commit goes through, a commit-msg hook's trailer lands in
the message; a token that may not run the project's programs, and a hooks folder outside the
project, are refused. The Rust side checks what the hooks saw from inside the sandbox.

Environment: SLUICE_TOKEN (full profile), SLUICE_CANARY.
Arguments: --url, --project, --sluice (the CLI binary), --repo (the project folder),
--outside (a hooks folder outside the project).
"""

import argparse
import asyncio
import os
import subprocess

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import common
from common import check, ok, refused, sluice

HOOKS = ["pre-commit", "prepare-commit-msg", "commit-msg", "post-commit"]


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--project", required=True)
    ap.add_argument("--sluice", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--outside", required=True)
    args = ap.parse_args()
    p = {"project": args.project}
    repo, binary = args.repo, args.sluice

    def user_git(*argv):
        subprocess.run(["git", "-C", repo, *argv], check=True,
                       env={**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null"})

    async def user(*argv):
        code, out, err = await sluice(binary, *argv)
        check(code == 0, f"sluice {' '.join(argv)} works", out + err)
        return out

    def marks():
        try:
            with open(os.path.join(repo, ".git", "hook-marks.log")) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    async def head(client):
        return (await ok(client, "git_log", {**p, "max_count": 1}))["commits"][0]

    token = os.environ["SLUICE_TOKEN"]
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with Client(streamable_http_client(args.url, http_client=http), cache=None) as client:
        # Off by default: the commit is made and no hook runs.
        await ok(client, "write_file", {**p, "path": "a.txt", "content": "a\n"})
        made = await ok(client, "git_commit", {**p, "message": "a", "paths": ["a.txt"]})
        check("hooks" not in made, "no hook runs by default", made)
        check(marks() == "", "nothing of the hooks ran", marks())

        # Allowed, but this project runs no project program: refused, nothing committed.
        out = await user("project", "set", args.project, "--git-hooks", "sandbox")
        check("as a job in the project's sandbox" in out, "the CLI says how hooks run", out)
        before = await head(client)
        await ok(client, "write_file", {**p, "path": "b.txt", "content": "b\n"})
        why = await refused(client, "git_commit", {**p, "message": "b", "paths": ["b.txt"]},
                            "forbidden")
        check("execution mode" in why["message"], "the refusal says why", why)
        check((await head(client))["id"] == before["id"], "nothing was committed")
        check(marks() == "", "no hook ran", marks())

        # With the project's programs allowed, every commit hook runs, each as a job.
        await user("project", "set", args.project, "--exec", "project")
        made = await ok(client, "git_commit", {**p, "message": "b", "paths": ["b.txt"]})
        ran = made.get("hooks", [])
        check([h["hook"] for h in ran] == HOOKS, "the four commit hooks ran in git's order", ran)
        check(all(h["exit_code"] == 0 and h["job_id"].startswith("job_") for h in ran),
              "each ran as a job and succeeded", ran)
        check("pre-commit: b.txt" in ran[0]["output"], "the hook saw what is staged", ran[0])
        last = await head(client)
        check(last["id"] == made["head"], "the commit is HEAD", last)
        shown = await ok(client, "git_show", {**p, "rev": made["head"]})
        check("Hook-Checked: yes" in (shown["commit"]["body"] or ""),
              "the commit-msg hook's trailer is in the message", shown["commit"])
        jobs = (await ok(client, "list_jobs", p))["jobs"]
        named = {j["command"] for j in jobs}
        check({f"git hook {h}" for h in HOOKS} <= named, "list_jobs shows the hook jobs", named)
        check(not any(repo in j["command"] for j in jobs), "no job shows a physical path", jobs)
        listed = await ok(client, "list_checkpoints", p)
        check("git hooks of a commit" in str(listed), "a checkpoint came before the hooks",
              listed)

        # A switch runs post-checkout, with git's arguments, and nothing else.
        switched = await ok(client, "git_switch", {**p, "branch": "feature", "create": True})
        check([h["hook"] for h in switched.get("hooks", [])] == ["post-checkout"],
              "post-checkout ran as a job", switched)
        check(f"post-checkout {made['head']} {made['head']} 1" in marks(),
              "with the previous and new HEAD and the branch flag", marks())
        back = await ok(client, "git_switch", {**p, "branch": "main"})
        check(back["branch"] == "main" and len(back.get("hooks", [])) == 1, "back again", back)

        # A failing pre-commit stops the commit: hook_failed, with its output.
        before = await head(client)
        await ok(client, "write_file", {**p, "path": "bad.txt", "content": "FORBIDDEN\n"})
        why = await refused(client, "git_commit", {**p, "message": "bad", "paths": ["bad.txt"]},
                            "hook_failed")
        check("pre-commit" in why["message"] and "forbidden word" in why["message"],
              "the refusal names the hook and carries its output", why)
        check((await head(client))["id"] == before["id"], "nothing was committed")
        status = await ok(client, "git_status", p)
        check(all(e["index_status"] in (".", "?") for e in status["entries"]),
              "the index is as it was", status)
        os.remove(os.path.join(repo, "bad.txt"))

        # A pre-commit that restages a file (a formatter) stops the commit: what is committed
        # is what was planned. Its change stays in the tree; the next commit takes it.
        await ok(client, "write_file", {**p, "path": "fmt.txt", "content": "unformatted\n"})
        why = await refused(client, "git_commit", {**p, "message": "fmt", "paths": ["fmt.txt"]},
                            "hook_failed")
        check("changed what is staged" in why["message"], "the refusal says why", why)
        check((await head(client))["id"] == before["id"], "nothing was committed")
        text = (await ok(client, "read_file", {**p, "path": "fmt.txt"}))["content"]
        check(text == "formatted\n", "the formatter's change is in the tree", text)
        made = await ok(client, "git_commit", {**p, "message": "fmt", "paths": ["fmt.txt"]})
        check(made["files"] == ["fmt.txt"], "the second commit takes it", made)

        # Undo works as for any commit.
        undone = await ok(client, "restore", {**p, "operation_id": made["operation_id"]})
        check(undone["head"] == before["id"], "the commit is undone", undone)

        # A hooks folder outside the project cannot be seen from the sandbox: refused.
        user_git("config", "core.hooksPath", args.outside)
        why = await refused(client, "git_commit", {**p, "message": "o", "paths": ["fmt.txt"]},
                            "forbidden")
        check("outside the project" in why["message"], "the refusal says why", why)
        check(args.outside not in why["message"], "and names no physical path", why)
        user_git("config", "core.hooksPath", ".githooks")

        # Off again: commits run no hook.
        await user("project", "set", args.project, "--git-hooks", "off")
        count = marks().count("\n")
        made = await ok(client, "git_commit", {**p, "message": "fmt", "paths": ["fmt.txt"]})
        check("hooks" not in made and marks().count("\n") == count, "no hook ran", made)
    print(f"OK {common.no_canary_anywhere()} checks")


asyncio.run(main())
