"""One step of the desktop app's end-to-end test, as a real assistant would take it: the
official Python MCP SDK (written by others) connects over Streamable HTTP with a bearer token
and calls list_projects and read_file.

  --expect ok      both calls succeed; prints "OK <file content>"
  --expect paused  the server refuses with HTTP 503 and code `paused`; prints "PAUSED"
  --expect stopped  the same refusal with code `stopped` (the emergency stop); prints "STOPPED"
  --expect job      start_job runs `sh -c --script` (or the JSON array --argv) in the project
                    (it waits for the user's approval first), --interactive and --publish
                    (a JSON array of ports, ready once the first accepts) as given;
                    prints "JOB <job id>"
  --expect type     write_job_input of --text, then the JSON array of key names --keys, to
                    job --job; prints "TYPED"
  --expect deleted  delete_path on --path waits for the user's approval and succeeds;
                    prints "DELETED"
  --expect denied   delete_path on --path is denied by the user: code `denied` and the user's
                    --reason in the message; prints "DENIED <message>"

Environment: SLUICE_TOKEN. Arguments: --url, --project, --path, --expect, --reason, --script,
--argv, --interactive, --publish, --job, --text, --keys.
"""

import argparse
import asyncio
import json
import os
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def fail(what, got=None):
    print(f"FAILED: {what}\n  got: {got!r}"[:4000], file=sys.stderr)
    sys.exit(1)


def leaves(exc):
    """Every exception inside (nested) exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        for e in exc.exceptions:
            yield from leaves(e)
    else:
        yield exc


def error_code(exc):
    for e in leaves(exc):
        data = getattr(getattr(e, "error", None), "data", None)
        if isinstance(data, dict) and "code" in data:
            return data["code"]
    return None


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--project", required=True)
    ap.add_argument("--path", default="README.md")
    ap.add_argument(
        "--expect",
        choices=["ok", "paused", "stopped", "deleted", "denied", "job", "type"],
        required=True,
    )
    ap.add_argument("--reason")
    ap.add_argument("--script")
    ap.add_argument("--argv")
    ap.add_argument("--interactive")
    ap.add_argument("--publish")
    ap.add_argument("--job")
    ap.add_argument("--text", default="")
    ap.add_argument("--keys", default="[]")
    args = ap.parse_args()

    statuses = []

    async def record(response):
        statuses.append(response.status_code)

    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {os.environ['SLUICE_TOKEN']}"},
        event_hooks={"response": [record]},
        # A delete waits while the user looks at the prompt: longer than an approval lives
        # (5 minutes), so the prompt ends by the user's decision or its expiry, not ours.
        timeout=330.0,
    )
    server = streamable_http_client(args.url, http_client=http)
    try:
        async with Client(server, cache=None) as client:
            listed = await client.call_tool("list_projects", {})
            if listed.is_error:
                fail("list_projects succeeds", listed.structured_content)
            names = [p["name"] for p in listed.structured_content["projects"]]
            if args.project not in names:
                fail("the project is listed", names)
            if args.expect == "job":
                # Blocks until the user approves the command in the window.
                argv = json.loads(args.argv) if args.argv else ["sh", "-c", args.script]
                call = {"project": args.project, "program": argv[0], "args": argv[1:]}
                if args.interactive:
                    call["interactive"] = args.interactive
                if args.publish:
                    call["publish"] = json.loads(args.publish)
                    call["ready"] = {"port": call["publish"][0]}
                res = await client.call_tool("start_job", call)
                out = res.structured_content or {}
                if res.is_error or not out.get("job_id", "").startswith("job_"):
                    fail("start_job starts the approved job", out)
                print("JOB " + out["job_id"])
                return
            if args.expect == "type":
                res = await client.call_tool(
                    "write_job_input",
                    {"job_id": args.job, "text": args.text, "keys": json.loads(args.keys)},
                )
                if res.is_error:
                    fail("write_job_input takes the input", res.structured_content)
                print("TYPED")
                return
            if args.expect in ("deleted", "denied"):
                # Blocks until the user decides in the window.
                res = await client.call_tool(
                    "delete_path", {"project": args.project, "path": args.path}
                )
                out = res.structured_content or {}
                if args.expect == "deleted":
                    if res.is_error:
                        fail("the approved delete runs", out)
                    print("DELETED")
                    return
                if not res.is_error or out.get("code") != "denied":
                    fail("the delete is refused with code `denied`", out)
                if args.reason not in out.get("message", ""):
                    fail("the refusal carries the user's reason", out)
                print("DENIED " + out["message"])
                return
            read = await client.call_tool(
                "read_file", {"project": args.project, "path": args.path}
            )
            if read.is_error:
                fail("read_file succeeds", read.structured_content)
            content = read.structured_content["content"]
    except BaseException as exc:  # noqa: BLE001 — we report whatever the SDK raised
        if args.expect in ("paused", "stopped"):
            code = error_code(exc)
            if 503 not in statuses:
                fail("the server answered 503", statuses)
            if code != args.expect:
                fail(f"the refusal carries code `{args.expect}`", [repr(e) for e in leaves(exc)])
            print(args.expect.upper())
            return
        fail("the calls succeed", [repr(e) for e in leaves(exc)])
    if args.expect in ("paused", "stopped"):
        fail(f"the calls are refused while {args.expect}", statuses)
    print("OK " + json.dumps(content))


asyncio.run(main())
