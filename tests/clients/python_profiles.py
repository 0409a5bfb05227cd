"""Token profiles as the official Python MCP SDK (written by others) sees them over Streamable
HTTP: a `review` token is offered only the read tools and its `write_file` is refused with
`outside_profile`; an `agent` token is offered the change tools but cannot write in a read-only
project (the project's own refusal). Exits non-zero on the first failed check.

Environment: SLUICE_REVIEW_TOKEN, SLUICE_AGENT_TOKEN, SLUICE_CANARY. Arguments: --url, and the
projects: --writable (read-write, execution any) and --read-only.
"""

import argparse
import asyncio
import os

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import common
from common import check, ok, refused

REVIEW_TOOLS = {
    "list_projects", "server_info", "system_info", "drop_privileges", "list_directory", "stat",
    "read_file", "read_media", "find_files", "search_text", "git_status", "git_diff", "git_log",
    "git_show", "git_refs", "code_outline", "code_symbols", "code_definition", "code_references",
}
EDIT_TOOLS = {
    "write_file", "edit_file", "apply_patch", "move_path", "create_directory", "delete_path",
    "restore", "list_backups", "git_commit", "git_branch", "git_tag", "git_switch", "git_stash",
    "create_checkpoint", "list_checkpoints", "restore_checkpoint", "git_worktree",
}
AGENT_TOOLS = {
    "run_command", "run_tests", "run_build", "start_job", "job_status", "job_logs", "cancel_job",
    "list_jobs", "write_job_input", "fetch_from_job", "code_hover", "code_diagnostics",
    "code_rename",
}


def connect(url, token):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(url, http_client=http), cache=None)


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--writable", required=True)
    ap.add_argument("--read-only", required=True)
    args = ap.parse_args()

    async with connect(args.url, os.environ["SLUICE_REVIEW_TOKEN"]) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        check(names == REVIEW_TOOLS, "a review token is offered exactly the read tools",
              sorted(names))
        write = {"project": args.writable, "path": "from-review.txt", "content": "x"}
        err = await refused(client, "write_file", write, "outside_profile")
        check("review" in err["message"] and "write_file" in err["message"],
              "the refusal names the profile and the tool", err)
        await refused(client, "run_command", {"project": args.writable, "program": "true"},
                      "outside_profile")
        info = await ok(client, "server_info", {})
        check(info["profile"] == "review", "server_info says the profile", info)
        listed = await ok(client, "read_file", {"project": args.writable, "path": "README.md"})
        check("hello" in listed["content"], "a review token reads", listed)

    async with connect(args.url, os.environ["SLUICE_AGENT_TOKEN"]) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        check(names == REVIEW_TOOLS | EDIT_TOOLS | AGENT_TOOLS,
              "an agent token is offered every tool", sorted(names))
        write = {"project": args.read_only, "path": "from-agent.txt", "content": "x"}
        await refused(client, "write_file", write, "read_only_project")
        await ok(client, "write_file",
                 {"project": args.writable, "path": "from-agent.txt", "content": "x"})

    print(f"OK {common.no_canary_anywhere()} checks")


asyncio.run(main())
