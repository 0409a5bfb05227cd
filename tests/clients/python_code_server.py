"""Code intelligence from the project's language server (pyright, in the job sandbox), as the
official Python MCP SDK uses it over Streamable HTTP:

- before a server runs, code_definition given a line answers from the syntax index and says so;
- code_hover starts pyright only after the user approves (the approval says it is a language
  server that stays running); the server is a job in the project's list;
- then code_definition and code_references given a line answer from the server (tier `server`),
  exactly; code_hover shows the signature and docstring; code_diagnostics finds the deliberate
  type error; code_rename returns a patch and changes nothing; apply_patch applies it and
  restore undoes it;
- a review token gets neither the server tools nor the server's answers;
- a read-only project never starts one (refused before anything is asked);
- `sluice pause` ends the server, and so does `sluice stop`; after a resume the next question
  asks again; a downgrade to `safe` ends it and no new one starts.
No answer holds a physical path. Exits non-zero on the first failed check.

Environment: SLUICE_TOKEN, SLUICE_REVIEW_TOKEN, SLUICE_DATA_DIR, SLUICE_CANARY, SLUICE_ROOT.
Arguments: --url, --sluice, --project, --readonly-project.
"""

import argparse
import asyncio
import json
import os

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import common
from common import approving, call, check, ok, refused, sluice

SERVER_TOOLS = {"code_hover", "code_diagnostics", "code_rename"}


async def server_jobs(client, project):
    jobs = (await ok(client, "list_jobs", {"project": project}))["jobs"]
    return [j for j in jobs if j["command"].startswith("language server:")]


async def running_server(client, project):
    return [j for j in await server_jobs(client, project) if j["state"] == "running"]


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--sluice", required=True)
    ap.add_argument("--project", required=True)
    ap.add_argument("--readonly-project", required=True)
    args = ap.parse_args()
    p = {"project": args.project}
    binary, root = args.sluice, os.environ["SLUICE_ROOT"]
    answers = []

    def keep(out):
        answers.append(json.dumps(out))
        return out

    def connect(token):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        return Client(streamable_http_client(args.url, http_client=http), cache=None)

    async with connect(os.environ["SLUICE_TOKEN"]) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        check(SERVER_TOOLS <= set(tools), "the server tools are listed", sorted(tools))
        for name in SERVER_TOOLS:
            t = tools[name]
            check(t.annotations.read_only_hint is False, f"{name} is not read-only", t.annotations)
            check(len(t.description) > 120 and t.output_schema is not None,
                  f"{name} is described", t.description)

        # No server yet: the syntax index answers, and says why.
        use = {**p, "name": "greet", "path": "main.py", "line": 3}
        out = keep(await ok(client, "code_definition", use))
        check(out["tier"] == "syntax" and "no language server runs" in out.get("note", ""),
              "without a server the syntax tier answers and says so", out)
        check(await server_jobs(client, args.project) == [], "nothing started unasked", out)

        # A question about a file it cannot be about starts nothing and asks nothing.
        await refused(client, "code_hover",
                      {**p, "path": "id_rsa_notes.py", "line": 1, "name": "key"},
                      "path_shielded")
        await refused(client, "code_hover", {**p, "path": "gone.py", "line": 1, "name": "x"},
                      "not_found")
        check(await server_jobs(client, args.project) == [], "nothing started for them")

        # The first server question asks, as a build does, and says what it starts; a second
        # question racing it waits for that start rather than asking again.
        racing = asyncio.create_task(
            call(client, "code_hover", {**p, "path": "main.py", "line": 1, "name": "greet"}))
        task = asyncio.create_task(
            call(client, "code_hover", {**p, "path": "main.py", "line": 3, "name": "greet"}))
        res, approved = await approving(binary, asyncio.gather(racing, task), tool="code_hover")
        other, res = res
        check(len(approved) == 1, "starting the language server asked once", approved)
        check(not other.is_error, "the racing question is answered too", other.structured_content)
        summary = approved[0]["summary"]
        check("pyright-langserver --stdio" in summary and "language server" in summary,
              "the approval names the language server", summary)
        check(not res.is_error, "code_hover answers once approved", res.structured_content)
        hover = keep(res.structured_content)
        check(hover["tier"] == "server" and "def greet(name: str) -> str" in hover["text"]
              and "Says hello." in hover["text"], "hover shows signature and docs", hover)
        jobs = await running_server(client, args.project)
        check(len(jobs) == 1 and "pyright-langserver" in jobs[0]["command"],
              "the server is a running job of the project", jobs)

        # Now definition and references given a line come from the server, exactly.
        out = keep(await ok(client, "code_definition", use))
        got = [(d["path"], d["line"], d["kind"]) for d in out["definitions"]]
        check(out["tier"] == "server" and got == [("pkg/util.py", 1, "function")],
              "the server's definition is the one the use means", out)
        other = {**p, "name": "greet", "path": "other.py", "line": 1}
        out = keep(await ok(client, "code_definition", other))
        got = [(d["path"], d["line"]) for d in out["definitions"]]
        check(got == [("other.py", 1)], "a same-named function elsewhere is its own", out)
        out = keep(await ok(client, "code_references",
                            {**p, "name": "greet", "path": "pkg/util.py", "line": 1}))
        got = [(r["path"], r["line"], r["is_definition"]) for r in out["references"]]
        check(out["tier"] == "server" and got == [("main.py", 1, False), ("main.py", 3, False),
              ("main.py", 4, False), ("pkg/util.py", 1, True)],
              "the server's uses are that function's, not the other greet's", out)

        out = keep(await ok(client, "code_outline", {**p, "path": "pkg/util.py"}))
        got = [(s["name"], s["line"], s["kind"], s.get("container")) for s in out["symbols"]]
        check(out["tier"] == "server" and got[0] == ("greet", 1, "function", None)
              and all(c == "greet" for (_, _, _, c) in got[1:]), "the server's outline", out)
        out = keep(await ok(client, "code_symbols", {**p, "query": "greet"}))
        got = sorted((s["path"], s["line"]) for s in out["symbols"])
        check(out["tier"] == "server" and got == [("other.py", 1), ("pkg/util.py", 1)],
              "the server's symbols of the project", out)

        out = keep(await ok(client, "code_diagnostics", {**p, "paths": ["main.py"]}))
        errors = [d for d in out["diagnostics"] if d["severity"] == "error"]
        check(out["tier"] == "server" and any(d["line"] == 4 and d["path"] == "main.py"
              for d in errors), "the deliberate type error is reported", out)

        preview = keep(await ok(client, "code_rename",
                                {**p, "path": "main.py", "line": 3, "name": "greet",
                                 "new_name": "welcome"}))
        check(preview["files"] == ["main.py", "pkg/util.py"] and preview["edits"] == 4,
              "the rename preview covers both files", preview)
        with open(os.path.join(root, "pkg/util.py")) as f:
            check(f.read().startswith("def greet("), "a preview changes nothing")
        applied = await ok(client, "apply_patch", {**p, "patch": preview["patch"]})
        with open(os.path.join(root, "pkg/util.py")) as f:
            check(f.read().startswith("def welcome("), "apply_patch applies the preview")
        with open(os.path.join(root, "other.py")) as f:
            check("def greet(" in f.read(), "the other greet is untouched")
        await ok(client, "restore", {**p, "operation_id": applied["operation_id"]})
        with open(os.path.join(root, "main.py")) as f:
            check("from pkg.util import greet" in f.read(), "restore undoes the rename")

        # Files of two servers' languages are not mixed in one call.
        await refused(client, "code_diagnostics", {**p, "paths": ["main.py", "App.java"]},
                      "invalid_argument")
        # A language whose server is not installed: the error says what to install, and
        # nothing was asked or started.
        out = await refused(client, "code_hover",
                            {**p, "path": "App.java", "line": 1, "name": "App"},
                            "language_server_missing")
        check("jdtls" in out["message"] and "syntax tier" in out["message"],
              "the error names what to install and what still answers", out)
        java = keep(await ok(client, "code_definition",
                             {**p, "name": "App", "path": "App.java", "line": 1}))
        check(java["tier"] == "syntax" and java["definitions"],
              "the syntax tier answers for that language", java)

        # A file the shield keeps out is not asked about.
        await refused(client, "code_hover",
                      {**p, "path": "id_rsa_notes.py", "line": 1, "name": "key"},
                      "path_shielded")

        # A read-only project never starts one: refused before anything is asked.
        ro = {"project": args.readonly_project, "path": "main.py", "line": 3, "name": "greet"}
        await refused(client, "code_hover", ro, "forbidden")
        code, out_, err = await sluice(binary, "approvals", "list", "--json")
        check(not [a for a in json.loads(out_) if a["state"] == "pending"],
              "nothing was asked for the read-only project", out_)
        check(await server_jobs(client, args.readonly_project) == [],
              "no server runs for the read-only project")

    async with connect(os.environ["SLUICE_REVIEW_TOKEN"]) as review:
        names = {t.name for t in (await review.list_tools()).tools}
        check(not (SERVER_TOOLS & names), "a review token is not offered the server tools", names)
        await refused(review, "code_hover", {**p, "path": "main.py", "line": 3, "name": "greet"},
                      "outside_profile")
        out = keep(await ok(review, "code_definition", use))
        check(out["tier"] == "syntax", "a review token gets the syntax tier", out)

    async with connect(os.environ["SLUICE_TOKEN"]) as client:
        # A pause ends the server (the watcher's next tick); after a resume the next question
        # asks again.
        code, _, err = await sluice(binary, "pause")
        check(code == 0, "pause works", err)
        await server_ends(binary, args.project, "a pause ends the server")
        code, _, err = await sluice(binary, "resume")
        check(code == 0, "resume works", err)
        await asks_again(client, binary, p, "after a resume it asks again")

        # The emergency stop ends it like every job.
        code, _, err = await sluice(binary, "stop")
        check(code == 0, "the emergency stop works", err)
        await server_ends(binary, args.project, "the emergency stop ends it")
        code, _, err = await sluice(binary, "resume")
        check(code == 0, "resume works", err)
        await asks_again(client, binary, p, "after the stop it asks again")

        # A downgrade to a mode that runs no toolchain ends it too.
        code, _, err = await sluice(binary, "project", "set", args.project, "--exec", "safe")
        check(code == 0, "the user can downgrade the project", err)
        await server_ends(binary, args.project, "a downgrade ends the server")
        await refused(client, "code_hover",
                      {**p, "path": "main.py", "line": 3, "name": "greet"}, "forbidden")

    for text in answers:
        check(root not in text, "no answer names the project's physical folder", text)
    print(f"OK {common.no_canary_anywhere()} checks")


async def asks_again(client, binary, p, what):
    """A question that starts the server anew: it asks once, is approved, and answers."""
    task = asyncio.create_task(
        call(client, "code_hover", {**p, "path": "main.py", "line": 3, "name": "greet"}))
    res, approved = await approving(binary, task, tool="code_hover")
    check(len(approved) == 1 and not res.is_error, what, approved)


async def server_ends(binary, project, what):
    """Waits (the watcher's tick is 2 s) until no language server of `project` runs."""
    for _ in range(100):
        if not await running_server_cli(binary, project):
            return
        await asyncio.sleep(0.1)
    check(False, what)


async def running_server_cli(binary, project):
    """The project's running language server jobs, as the user's `sluice jobs` shows them."""
    code, out, err = await sluice(binary, "jobs", "--project", project, "--json")
    check(code == 0, "sluice jobs works", err)
    return [j for j in json.loads(out)
            if j["command"].startswith("language server:") and j["state"] == "running"]


asyncio.run(main())
