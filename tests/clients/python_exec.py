"""Drives Sluice's execution tools with the official Python MCP SDK over Streamable HTTP: each
execution mode allows and refuses what it should, arguments stay literal (CI-01), option
injection is refused (CI-02), interpreters and wrappers are refused or asked with a reason
(CI-03), a job's environment holds none of the server's secrets (ES-01), Landlock keeps writes
inside the project and the network off, a cancelled job leaves none of its `setsid` and
double-forked descendants alive, and a call the client cancels after approval stops its command. The human side of each approval is played through the real CLI
(`sluice approvals list/approve/deny`). Exits non-zero on the first failed check.

Environment: SLUICE_TOKEN, SLUICE_DATA_DIR, SLUICE_CANARY, SLUICE_ENV_CANARIES (name=value
pairs, comma-separated, that the server has in its environment). Arguments: --url, --sluice BIN,
--outside DIR (a folder outside every project), --marker N (a number unique to this run).
Projects: "off", "safe", "build" (project mode, a cargo crate) and "demo" (any mode).
"""

import argparse
import asyncio
import json
import os
from urllib.parse import urlparse

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import common
from common import call, check, ok, refused, sluice


async def pending(binary):
    code, out, err = await sluice(binary, "approvals", "list", "--json")
    check(code == 0, "approvals list works", err)
    return [a for a in json.loads(out) if a["state"] == "pending"]


async def decided(client, binary, tool, args, verdict):
    """Calls `tool`; the user decides (`approve` or `deny`) each approval it asks for, through the
    CLI. Returns the result and the summaries the user was shown."""
    task = asyncio.create_task(call(client, tool, args))
    shown = []
    while not task.done():
        for a in await pending(binary):
            if a["tool"] == tool:
                shown.append(a["summary"])
                code, _, err = await sluice(binary, "approvals", verdict, a["id"])
                check(code == 0, f"approvals {verdict} works", err)
        await asyncio.wait({task}, timeout=0.1)
    return task.result(), shown


async def approved(client, binary, tool, args):
    res, shown = await decided(client, binary, tool, args, "approve")
    check(shown, f"{tool} {args} asked first", res.structured_content)
    check(not res.is_error, f"{tool} {args} succeeds once approved", res.structured_content)
    return res.structured_content


async def asked_and_denied(client, binary, args):
    """A command `any` mode asks about; the user denies it. Returns what the prompt said."""
    res, shown = await decided(client, binary, "run_command", args, "deny")
    check(len(shown) == 1, f"{args} asked exactly once", shown)
    check(res.is_error and res.structured_content["code"] == "denied", "the denial returns",
          res.structured_content)
    return shown[0]


def run(project, program, *args):
    return {"project": project, "program": program, "args": list(args)}


def alive(pid, marker):
    """Whether `pid` is a live (not zombie) process of this run."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read().decode(errors="replace")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z" and marker in cmdline


def marked(marker):
    """The live `sleep` processes of this run (their command line carries `marker`)."""
    def is_sleep(pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                return os.path.basename(f.read().split(b"\0")[0]) == b"sleep"
        except OSError:
            return False
    return sorted(int(p) for p in os.listdir("/proc")
                  if p.isdigit() and alive(p, marker) and is_sleep(p))


async def modes(client, binary):
    # off: nothing runs, whatever it is.
    for tool in ("run_command", "start_job"):
        msg = (await refused(client, tool, run("off", "cargo", "--version"), "forbidden"))["message"]
        check("execution is off" in msg, "off says why", msg)

    # safe: version checks run without asking; anything more is refused.
    out = await ok(client, "run_command", run("safe", "cargo", "--version"))
    check(out["state"] == "succeeded" and out["stdout"].startswith("cargo "), "cargo --version",
          out)
    check(not await pending(binary), "safe mode asked nobody")
    for args in (["build"], ["metadata", "--no-deps", "--output=owned"]):
        msg = (await refused(client, "run_command", run("safe", "cargo", *args), "forbidden"))["message"]
        check("safe mode" in msg, "safe mode says why", msg)

    # project: the project's own cargo build runs once the user approves it.
    out = await approved(client, binary, "run_command",
                         {**run("build", "cargo", "build", "--offline", "-q"),
                          "timeout_seconds": 300})
    check(out["state"] == "succeeded" and out["exit_code"] == 0, "cargo build succeeded", out)
    st = await ok(client, "stat", {"project": "build", "path": "target/debug/hello"})
    check(st["kind"] == "file", "the build produced the binary", st)
    out = await approved(client, binary, "run_command",
                         run("build", "cargo", "run", "--offline", "-q"))
    check(out["stdout"] == "hello from a sluice job\n", "cargo run ran the project's program", out)
    # Dangerous forms are refused outright in project mode, without asking.
    for args in (["build", "--config", "build.rustc-wrapper='/bin/sh'"],
                 ["install", "ripgrep"], ["build", "-Zunstable-options"]):
        msg = (await refused(client, "run_command", run("build", "cargo", *args), "forbidden"))["message"]
        check("refused in project mode" in msg, "project mode names the danger", msg)
    check(not await pending(binary), "project mode asked nothing about dangerous forms")


async def ci02_option_injection(client, binary, outside):
    owned = os.path.join(outside, "owned")
    cases = [
        ("build", "cargo", ["build", f"--out-dir={owned}"]),
        ("build", "cargo", ["build", "--target-dir", owned]),
        ("build", "cargo", ["test", f"--output={owned}"]),
        ("build", "cargo", ["run", "-p", f"--output={owned}"]),
        ("build", "cargo", ["run", f"--bin=-o{owned}"]),
        ("build", "git", ["log", f"--output={owned}"]),
        ("safe", "git", ["--version", f"--output={owned}"]),
    ]
    for project, program, args in cases:
        await refused(client, "run_command", run(project, program, *args), "forbidden")
    check(not await pending(binary), "option injection never reached a prompt")
    check(not os.path.exists(owned), "nothing was written outside", owned)


async def ci03_interpreters_and_wrappers(client, binary):
    dangerous = [
        (["sh", "-c", "id"], "`sh -c`"),
        (["node", "-e", "require('child_process').execSync('id')"], "`node -e`"),
        (["python3", "-c", "import os; os.system('id')"], "`python3 -c`"),
        (["xargs", "rm"], "`xargs`"),
        (["timeout", "5", "sh", "-c", "id"], "`sh -c`"),
        (["env", "bash", "-lc", "id"], "`bash -c`"),
    ]
    # Project mode refuses every one of them, and the plain wrappers too, without asking.
    for argv, _ in dangerous + [(["env", "rm", "-rf", "src"], "")]:
        await refused(client, "run_command", run("build", *argv), "forbidden")
    check(not await pending(binary), "project mode asked nothing")
    # Any mode asks, and the prompt says why; the user denies.
    for argv, why in dangerous:
        summary = await asked_and_denied(client, binary, run("demo", *argv))
        check("risk dangerous" in summary and why in summary, f"the prompt explains {argv}",
              summary)
    summary = await asked_and_denied(client, binary, run("demo", "env", "rm", "-rf", "src"))
    check("rm" in summary and "risk" in summary, "a wrapper is seen through", summary)
    await ok(client, "stat", {"project": "demo", "path": "src/main.rs"})


async def ci01_literal_arguments(client, binary):
    literal = ["$(id)", ";id", "`id`", "|id", "\nid", "&calc", "%COMSPEC%", "!cmd", "a b",
               "'q'", '"dq"', "*"]
    out = await approved(client, binary, "run_command", run("demo", "printf", "[%s]", *literal))
    check(out["stdout"] == "".join(f"[{a}]" for a in literal), "arguments stayed literal", out)
    check("uid=" not in out["stdout"], "nothing was expanded", out)


async def es01_environment(client, binary, canaries):
    out = await approved(client, binary, "run_command", run("demo", "/usr/bin/env"))
    check(out["state"] == "succeeded", "env ran", out)
    env = dict(line.split("=", 1) for line in out["stdout"].splitlines() if "=" in line)
    check("PATH" in env and "HOME" in env, "the job has a minimal environment", env)
    check(env["HOME"] != os.environ.get("HOME"), "with a private HOME", env)
    for name, value in canaries:
        check(name not in env, f"{name} is not in the job's environment", env)
        check(value not in out["stdout"], f"the value of {name} is not either", out)
    for name in env:
        upper = name.upper()
        check(not any(s in upper for s in ("TOKEN", "SECRET", "KEY", "PASSWORD")),
              "no secret-looking variable at all", name)


async def landlock(client, binary, outside, port):
    escape = os.path.join(outside, "landlock-escape.txt")
    res, shown = await decided(client, binary, "run_command", run("demo", "touch", escape),
                               "approve")
    check(shown, "writing outside asked first")
    out = res.structured_content
    check(not res.is_error and out["state"] == "failed" and out["exit_code"] != 0,
          "the write outside failed", out)
    # Refused by Landlock (EACCES), or the folder is not in the job's view at all (namespaces).
    check("Permission denied" in out["stderr"] or "No such file or directory" in out["stderr"],
          "refused, or not there", out)
    check(not os.path.exists(escape), "and the file does not exist", escape)
    # Inside the project the same program writes fine.
    out = await approved(client, binary, "run_command", run("demo", "touch", "inside.txt"))
    await ok(client, "stat", {"project": "demo", "path": "inside.txt"})
    # Network off: not even the host's loopback server is reachable.
    connect = ("import socket\n"
               f"try:\n socket.create_connection(('127.0.0.1', {port}), 5)\n print('connected')\n"
               "except OSError as e:\n print('refused', e.errno)\n")
    out = await approved(client, binary, "run_command", run("demo", "/usr/bin/python3", "-c",
                                                            connect))
    # EACCES from Landlock, or ECONNREFUSED in the job's own network namespace, where nothing
    # listens: the host's listener is never reached either way.
    check(out["stdout"].strip() in ("refused 13", "refused 111"), "connect() fails", out)


async def es36_shield(client, binary, granted_path, granted_canary):
    """A command never reads what the project's shield hides, whatever it does (the `.env` with
    the run's canary: `no_canary_anywhere` checks every response); once the user grants one file
    to the project's commands, a command reads that one, read-only, and the approval says so."""
    probes = ("cat .env config/.env.local; ln .env h 2>/dev/null; cat h 2>/dev/null; "
              "cp -r . /tmp/c 2>/dev/null; grep -r -h -a -e SECRET -e es36 . /tmp/c 2>/dev/null; "
              "find . -name '.env*' -exec cat {} +; echo end")
    out = await approved(client, binary, "run_command", run("demo", "sh", "-c", probes))
    check("end" in out["stdout"], "the probes ran", out)
    check(granted_canary not in json.dumps(out) and "SECRET" not in out["stdout"],
          "no shielded content reaches the assistant", out)
    code, _, err = await sluice(binary, "project", "sandbox", "demo", "--grant", granted_path,
                                "--yes")
    check(code == 0, "the user grants one shielded file to the project's commands", err)
    res, shown = await decided(client, binary, "run_command",
                               run("demo", "sh", "-c", "cat config/.env.local; cat .env; "
                                   "echo x >> config/.env.local || echo read-only"), "approve")
    out = res.structured_content
    check(granted_canary in out["stdout"] and "read-only" in out["stdout"],
          "the granted file is readable, read-only", out)
    check(any("granted to the project's commands: config/.env.local" in s for s in shown),
          "the approval names the granted file", shown)
    code, _, err = await sluice(binary, "project", "sandbox", "demo", "--revoke", granted_path,
                                "--yes")
    check(code == 0, "the user takes the grant back", err)


async def tree_cancel(client, binary, marker):
    script = (f"setsid sleep {marker} & echo $!; (sleep {marker} & echo $!); "
              f"sleep {marker} & echo $!; wait")
    job = await approved(client, binary, "start_job", run("demo", "sh", "-c", script))
    job_id = job["job_id"]
    loop = asyncio.get_running_loop()
    end = loop.time() + 20
    pids = []
    while len(pids) < 3:
        check(loop.time() < end, "the job printed its children", pids)
        page = await ok(client, "job_logs", {"job_id": job_id})
        pids = [int(p) for p in page["text"].split()]
        await asyncio.sleep(0.05)
    st = await ok(client, "job_status", {"job_id": job_id})
    check(st["state"] == "running" and st["confinement"], "running, confined", st)
    # The job prints its children's ids in its own PID namespace; here they are found by the
    # marker in their command lines.
    # A child prints its id from the shell before it execs `sleep`: wait for all three to be
    # `sleep` (on a loaded machine that takes a moment), then check there are exactly three.
    host_pids = marked(marker)
    while len(host_pids) < 3 and loop.time() < end:
        await asyncio.sleep(0.05)
        host_pids = marked(marker)
    check(len(host_pids) == 3, "each descendant runs before the cancel", (pids, host_pids))
    done = await ok(client, "cancel_job", {"job_id": job_id})
    check(done["state"] == "cancelled", "the job is cancelled", done)
    for pid in host_pids:
        check(not alive(pid, marker), "no descendant survives the cancel", pid)
    check(marked(marker) == [], "nothing of the job is left", marked(marker))
    listed = await ok(client, "list_jobs", {"project": "demo"})
    check(any(j["job_id"] == job_id and j["state"] == "cancelled" for j in listed["jobs"]),
          "list_jobs shows it cancelled", listed)


async def cancelled_call(client, binary, marker):
    """A call the user approved, then cancelled by the client: the command stops with it, and
    the job is recorded as cancelled (2026-07-28: a closed response stream is a cancellation)."""
    mark = f"{marker}7"
    task = asyncio.create_task(call(client, "run_command",
                                    {**run("demo", "sleep", mark), "timeout_seconds": 300}))
    loop = asyncio.get_running_loop()
    end = loop.time() + 20
    while not marked(mark):
        check(loop.time() < end and not task.done(), "the approved command starts", task)
        for a in await pending(binary):
            if a["tool"] == "run_command":
                code, _, err = await sluice(binary, "approvals", "approve", a["id"])
                check(code == 0, "approvals approve works", err)
        await asyncio.sleep(0.05)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    end = loop.time() + 20
    while marked(mark):
        check(loop.time() < end, "the command dies when its call is cancelled", marked(mark))
        await asyncio.sleep(0.05)
    end = loop.time() + 20
    while True:
        listed = await ok(client, "list_jobs", {"project": "demo"})
        jobs = [j for j in listed["jobs"] if j["command"].endswith(f"sleep {mark}")]
        if jobs and jobs[0]["state"] == "cancelled":
            break
        check(loop.time() < end, "list_jobs shows the call's job cancelled", jobs)
        await asyncio.sleep(0.05)


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--sluice", required=True)
    ap.add_argument("--outside", required=True)
    ap.add_argument("--marker", required=True)
    ap.add_argument("--granted", required=True)
    args = ap.parse_args()
    canaries = [tuple(p.split("=", 1)) for p in os.environ["SLUICE_ENV_CANARIES"].split(",")]
    token = os.environ["SLUICE_TOKEN"]
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=600)
    async with Client(streamable_http_client(args.url, http_client=http), cache=None) as client:
        await modes(client, args.sluice)
        await ci02_option_injection(client, args.sluice, args.outside)
        await ci03_interpreters_and_wrappers(client, args.sluice)
        await ci01_literal_arguments(client, args.sluice)
        await es01_environment(client, args.sluice, canaries)
        await landlock(client, args.sluice, args.outside, urlparse(args.url).port)
        await es36_shield(client, args.sluice, args.granted, f"es36granted{args.marker}")
        await tree_cancel(client, args.sluice, args.marker)
        await cancelled_call(client, args.sluice, args.marker)
    for _, value in canaries:
        for text in common.seen:
            check(value not in text, "no environment canary in any response", text)
    print(f"OK {common.no_canary_anywhere()} checks")


asyncio.run(main())
