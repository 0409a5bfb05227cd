"""The e-mail addresses of a project's git history as the official Python MCP SDK (written by
others) sees them over Streamable HTTP. By default no git tool returns one — not git_log, not
git_show (its commit or its patches), not git_status or git_diff — nor does any side door the
script tries (format options as revisions or arguments, raw objects, the reflog, the
repository config); no tool can turn them on. Once the user allows them (`sluice project set
--git-emails show`, the human's side, run here through the real CLI), git_log and git_show
carry each commit's author address, and still no committer's or tagger's; hidden again, they
are gone at the next call. Exits non-zero on the first failed check.

Environment: SLUICE_TOKEN, SLUICE_CANARY, SLUICE_DATA_DIR (for the CLI), SLUICE_GIT_PRIVATE
(the history's addresses, comma-separated), SLUICE_GIT_NEVER (the committer's and tagger's,
never shown), SLUICE_GIT_AUTHOR (the main author's address), SLUICE_GIT_TRAILER (an address in
a Signed-off-by trailer, which stays: it is the message).
Arguments: --url, --project, --sluice (the CLI binary).
"""

import argparse
import asyncio
import json
import os

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import common
from common import call, check, ok, refused, sluice

PRIVATE = os.environ["SLUICE_GIT_PRIVATE"].split(",")
NEVER = os.environ["SLUICE_GIT_NEVER"].split(",")
AUTHOR = os.environ["SLUICE_GIT_AUTHOR"]
TRAILER = os.environ["SLUICE_GIT_TRAILER"]
# Side doors: format and raw-object options where a revision goes, and tree paths.
BAD_REVS = ["--pretty=raw", "--format=%ae%n%ce", "HEAD --format=%ce", "--show-signature",
            "HEAD:.git/config", "-p", "HEAD^{tag}:x"]


def text_of(res):
    """A response as the model would read it: structured content and every text part."""
    return json.dumps(res.structured_content) + " ".join(getattr(c, "text", "") for c in res.content)


async def every_git_answer(client, p):
    """What every git tool answers, each way of asking it tried, as one text."""
    texts = []

    async def take(tool, args, fails=False):
        res = await call(client, tool, {**p, **args})
        check(res.is_error == fails, f"{tool}({args}) {'fails' if fails else 'succeeds'}",
              res.structured_content)
        texts.append(text_of(res))
        return res

    for args in [{}, {"rev": "v1"}, {"rev": "HEAD@{0}"}, {"include_files": False},
                 {"path": "notes.txt"}, {"rev": "v1..side"}]:
        await take("git_log", args)
    for rev in ["HEAD", "HEAD~1", "HEAD^2", "v1", "HEAD@{2}"]:
        res = await take("git_show", {"rev": rev})
        check(res.structured_content["commit"]["id"], "git_show names its commit", rev)
    await take("git_status", {})
    await take("git_diff", {})
    await take("git_diff", {"staged": True})
    # Arguments no tool has are no settings: ignored or refused, never obeyed.
    res = await call(client, "git_log", {**p, "emails": "show", "show_emails": True,
                                         "format": "%ae %ce", "pretty": "raw"})
    texts.append(text_of(res))
    for rev in BAD_REVS:
        await take("git_show", {"rev": rev}, fails=True)
        await take("git_log", {"rev": rev}, fails=True)
    # The reflog, the config and the last message live in .git, which the shield hides.
    for path in [".git/logs/HEAD", ".git/config", ".git/COMMIT_EDITMSG", ".git/ORIG_HEAD"]:
        await take("read_file", {"path": path}, fails=True)
    st = await ok(client, "search_text", {**p, "pattern": "@[a-z]+\\.example\\."})
    check(st["matches"] == [], "no project file holds an address", st)
    return "\n".join(texts)


def hidden(all_text, when):
    for address in PRIVATE:
        check(address not in all_text, f"{when}: {address} appears nowhere", all_text)
        local, domain = address.split("@")
        if domain != "example.com":
            check(local not in all_text and domain not in all_text,
                  f"{when}: not even part of {address}", all_text)
    check("author_email" not in all_text, f"{when}: no field pretends to hold an address",
          all_text)
    check(TRAILER in all_text, f"{when}: a message keeps its trailer (its content)", all_text)


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--project", required=True)
    ap.add_argument("--sluice", required=True)
    args = ap.parse_args()
    p = {"project": args.project}
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {os.environ['SLUICE_TOKEN']}"})
    async with Client(streamable_http_client(args.url, http_client=http), cache=None) as client:
        # No tool sets it: none is about e-mail, and no tool's arguments mention it.
        tools = (await client.list_tools()).tools
        for t in tools:
            schema = json.dumps(t.input_schema).lower()
            check("email" not in t.name and "e-mail" not in schema and "email" not in schema,
                  f"{t.name} takes nothing about e-mail addresses", schema)
        # What git_log and git_show promise: an optional author address, never a committer's.
        for name in ["git_log", "git_show"]:
            out = json.dumps(next(t for t in tools if t.name == name).output_schema)
            check("author_email" in out and "committer_email" not in out,
                  f"{name} declares the author address, and only it", out)

        hidden(await every_git_answer(client, p), "by default")
        # A read-write project: the assistant cannot write the repository's config either.
        await refused(client, "write_file", {**p, "path": ".git/config", "content": "[x]\n"},
                      "path_shielded")

        # The user allows them (the CLI, another process): the next call has them.
        code, out, err = await sluice(args.sluice, "project", "set", args.project,
                                      "--git-emails", "show")
        check(code == 0 and "shown to assistants" in out, "the user shows them", out + err)
        log = await ok(client, "git_log", p)
        emails = {c.get("author_email") for c in log["commits"]}
        check(AUTHOR in emails and None not in emails, "every commit has its author's address",
              log)
        shown = await ok(client, "git_show", {**p, "rev": "HEAD"})
        check(shown["commit"].get("author_email") == AUTHOR, "git_show has it too", shown)
        # Committers and taggers have no field: only authors' addresses are shown.
        all_text = await every_git_answer(client, p)
        for address in NEVER:
            check(address not in all_text, f"{address} is still not shown", all_text)

        # Hidden again: gone at the next call.
        code, out, err = await sluice(args.sluice, "project", "set", args.project,
                                      "--git-emails", "hide")
        check(code == 0 and "hidden from assistants" in out, "the user hides them", out + err)
        hidden(await every_git_answer(client, p), "hidden again")
    print(f"OK {common.no_canary_anywhere()} checks")


asyncio.run(main())
