"""Drives Sluice's live jobs with the official Python MCP SDK over Streamable HTTP: an
interactive job asks the user first and the card (and `sluice approvals show`) says the assistant
will be able to type into it; a Python REPL on a terminal of its own computes 6*7; Ctrl-C stops
a loop inside it and the session goes on; a `read -p` prompt is answered; a program checking
isatty gets a terminal; a wait returns on new output before its deadline and at its deadline
otherwise, and a cancelled wait leaves the job running; another token can neither read nor type into the session; a review token cannot type
at all; writes to a job that ended or is not interactive are refused. The human side is played
through the real CLI. Exits non-zero on the first failed check.

Environment: SLUICE_TOKEN (full), SLUICE_OTHER_TOKEN (another full token), SLUICE_REVIEW_TOKEN
(a review-profile token), SLUICE_DATA_DIR, SLUICE_CANARY. Arguments: --url, --sluice BIN.
Project: "demo" (any mode).
"""

import argparse
import asyncio
import os
import time

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import common
from common import approving, call, check, ok, refused


async def start_interactive(client, binary, args):
    """start_job with `interactive`: it must ask, and say that the assistant can type."""
    res, approved = await approving(binary, asyncio.create_task(call(client, "start_job", args)),
                                    "start_job", shown="type into")
    asked = [a["summary"] for a in approved]
    check(len(asked) == 1, "an interactive start asks the user exactly once", asked)
    check("type into" in asked[0], "the card says the assistant will type into it", asked[0])
    check(not res.is_error, "the approved interactive job starts", res.structured_content)
    job = res.structured_content
    check(job["interactive"] == args["interactive"], "the job says it is interactive", job)
    return job["job_id"]


async def until(client, job, cursor, **wait):
    """job_logs from `cursor` with a wait; returns the page."""
    return await ok(client, "job_logs", {"job_id": job, "cursor": cursor, **wait})


async def type_in(client, job, text=None, keys=(), end=False):
    args = {"job_id": job, "keys": list(keys), "end_input": end}
    if text is not None:
        args["text"] = text
    return await ok(client, "write_job_input", args)


async def repl(client, binary, other, review):
    job = await start_interactive(client, binary, {
        "project": "demo", "program": "python3", "args": ["-i", "-q"],
        "interactive": "terminal"})
    page = await until(client, job, 0, pattern=">>> $", wait_seconds=30)
    check(page["waited"] == "pattern", "the REPL prompts", page)
    sent = await type_in(client, job, "6*7", ["enter"])
    check(sent["bytes_sent"] == 4, "4 bytes typed (Enter is CR)", sent)
    page = await until(client, job, sent["next_cursor"], pattern=r"42\s", wait_seconds=30)
    check(page["waited"] == "pattern" and "42" in page["text"], "6*7 answers 42", page)

    # Ctrl-C stops a loop inside the REPL; the session goes on.
    await type_in(client, job, "import time", ["enter"])
    sent = await type_in(client, job, "while True: print('tick', flush=True) or time.sleep(0.3)\n\n")
    page = await until(client, job, sent["next_cursor"], pattern=r"tick\s", wait_seconds=30)
    check(page["waited"] == "pattern", "the loop runs", page)
    sent = await type_in(client, job, keys=["ctrl-c"])
    page = await until(client, job, sent["next_cursor"], pattern="KeyboardInterrupt",
                       wait_seconds=30)
    check(page["waited"] == "pattern", "Ctrl-C interrupts the loop", page)
    sent = await type_in(client, job, "print(6*9)", ["enter"])
    page = await until(client, job, sent["next_cursor"], pattern=r"54\s", wait_seconds=30)
    check(page["waited"] == "pattern", "the session goes on after Ctrl-C", page)

    # A wait returns on new output before its deadline, and at its deadline otherwise.
    page = await until(client, job, 0, max_bytes=65536)
    end = page["next_cursor"]
    began = time.monotonic()
    page = await until(client, job, end, wait="output", wait_seconds=2)
    check(page["waited"] == "deadline" and page["text"] == "", "no output: the deadline", page)
    check(time.monotonic() - began >= 1.5, "the wait lasted until its deadline", page)
    waiting = asyncio.create_task(until(client, job, end, wait="output", wait_seconds=30))
    await asyncio.sleep(0.5)
    check(not waiting.done(), "the wait waits", None)
    began = time.monotonic()
    await type_in(client, job, "7*6", ["enter"])
    page = await waiting
    check(page["waited"] == "output" and page["text"], "new output ends the wait", page)
    check(time.monotonic() - began < 25, "well before the deadline", time.monotonic() - began)

    # A cancelled wait ends the wait, not the job: the session still answers.
    waiting = asyncio.create_task(until(client, job, 0, pattern="never-printed", wait_seconds=30))
    await asyncio.sleep(0.5)
    waiting.cancel()
    try:
        await waiting
    except asyncio.CancelledError:
        pass
    st = await ok(client, "job_status", {"job_id": job})
    check(st["state"] == "running", "the job outlives a cancelled wait", st)
    sent = await type_in(client, job, "1+1", ["enter"])
    page = await until(client, job, sent["next_cursor"], pattern=r"\n2\s", wait_seconds=30)
    check(page["waited"] == "pattern", "the session answers after a cancelled wait", page)

    # Another token neither reads nor types; a review token cannot type.
    await refused(other, "job_logs", {"job_id": job}, "forbidden")
    await refused(other, "write_job_input", {"job_id": job, "text": "1"}, "forbidden")
    await refused(review, "write_job_input", {"job_id": job, "text": "1"}, "outside_profile")
    listed = [t.name for t in (await review.list_tools()).tools]
    check("write_job_input" not in listed, "a review token is not offered the tool", listed)

    # Refusals: bad key, too much at once; then end of input ends the REPL.
    await refused(client, "write_job_input", {"job_id": job, "keys": ["f13"]}, "invalid_argument")
    await refused(client, "write_job_input", {"job_id": job, "text": "x" * 20000}, "too_large")
    await type_in(client, job, keys=["ctrl-d"])
    st = await ok(client, "job_status", {"job_id": job, "wait_seconds": 30})
    check(st["state"] == "succeeded", "ctrl-d ends the REPL", st)
    await refused(client, "write_job_input", {"job_id": job, "text": "1"}, "job_ended")


async def prompt_and_tty(client, binary):
    # The prompt ends without a space, as `y/n?` does: it shows while the program waits.
    script = ("[ -t 0 ] && [ -t 1 ] && echo tty-yes; read -p 'name?' n; echo \"hi $n\"")
    job = await start_interactive(client, binary, {
        "project": "demo", "program": "bash", "args": ["-c", script],
        "interactive": "terminal"})
    page = await until(client, job, 0, pattern=r"name\?", wait_seconds=30)
    check(page["waited"] == "pattern", "the prompt shows before it is answered", page)
    check("tty-yes" in page["text"], "a program checking isatty gets a terminal", page)
    await type_in(client, job, "quokka", ["enter"])
    page = await until(client, job, 0, wait="end", wait_seconds=30)
    check(page["waited"] == "end" and "hi quokka" in page["text"], "the prompt is answered",
          page)


async def not_interactive(client, binary):
    res, _ = await approving(binary, asyncio.create_task(call(client, "start_job", {
        "project": "demo", "program": "echo", "args": ["plain"]})))
    job = res.structured_content["job_id"]
    await refused(client, "write_job_input", {"job_id": job, "text": "x"},
                  {"not_interactive", "job_ended"})
    st = await ok(client, "job_status", {"job_id": job, "wait_seconds": 30})
    check(st["state"] == "succeeded", "a job_status wait ends with the job", st)
    await refused(client, "write_job_input", {"job_id": job, "text": "x"}, "not_interactive")


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--sluice", required=True)
    args = ap.parse_args()

    def connect(token):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=600)
        return Client(streamable_http_client(args.url, http_client=http), cache=None)

    async with connect(os.environ["SLUICE_TOKEN"]) as client, \
            connect(os.environ["SLUICE_OTHER_TOKEN"]) as other, \
            connect(os.environ["SLUICE_REVIEW_TOKEN"]) as review:
        await repl(client, args.sluice, other, review)
        await prompt_and_tty(client, args.sluice)
        await not_interactive(client, args.sluice)
    print(f"OK {common.no_canary_anywhere()} checks")


asyncio.run(main())
