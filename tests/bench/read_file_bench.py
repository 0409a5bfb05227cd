"""Per-call server CPU and calls/s of `read_file` on a 4 KiB file, through the official Python
MCP client, for Sluice (HTTP, and stdio through `sluice stdio`) and for a peer server launched
over stdio. Server CPU is read from /proc (utime + stime of the server processes) before and
after the timed calls, so the client's own cost is excluded.

The targets take turns for several rounds, so a slow moment of the machine (a shared virtual
machine has them) falls on all of them alike; each figure is the median of its rounds.

Prints one JSON object per target.
"""

import argparse
import asyncio
import json
import os
import statistics
import time

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids):
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except FileNotFoundError:
            pass
    return total / TICKS


def descendants(root):
    """Every live process below `root` (the stdio servers the client launched)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                children.setdefault(int(fields[1]), []).append(int(entry))
            except (FileNotFoundError, ProcessLookupError):
                pass
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        for c in children.get(pid, []):
            out.append(c)
            todo.append(c)
    return out


async def measure(server, tool_args, n, server_pids):
    async with Client(server, mode="legacy", cache=None) as client:
        for _ in range(50):
            await client.call_tool("read_file", tool_args)
        pids = server_pids() 
        cpu0, t0 = cpu_seconds(pids), time.perf_counter()
        for _ in range(n):
            res = await client.call_tool("read_file", tool_args)
            assert not res.is_error, res
        wall, cpu = time.perf_counter() - t0, cpu_seconds(pids) - cpu0
    return n / wall, cpu / n * 1e6


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sluice-url")
    ap.add_argument("--sluice-pid", type=int)
    ap.add_argument("--sluice-bin")
    ap.add_argument("--project", default="bench")
    ap.add_argument("--file", required=True, help="absolute path of the 4 KiB file (peer)")
    ap.add_argument("--rel", default="file4k.txt")
    ap.add_argument("--peer", nargs="+", help="peer stdio command")
    args = ap.parse_args()
    token = os.environ["SLUICE_TOKEN"]
    me = os.getpid()

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    sluice_args = {"project": args.project, "path": args.rel}
    stdio = StdioServerParameters(command=args.sluice_bin, args=["stdio"],
                                  env={**os.environ, "SLUICE_TOKEN": token})
    peer = StdioServerParameters(command=args.peer[0], args=args.peer[1:], env=dict(os.environ))
    targets = [
        ("sluice (HTTP)", lambda: streamable_http_client(args.sluice_url, http_client=http),
         sluice_args, lambda: [args.sluice_pid]),
        ("sluice (stdio bridge)", lambda: stdio, sluice_args,
         lambda: [args.sluice_pid] + descendants(me)),
        ("server-filesystem (stdio)", lambda: peer, {"path": args.file},
         lambda: descendants(me)),
    ]
    runs = {name: [] for name, *_ in targets}
    for _ in range(args.rounds):
        for name, server, tool_args, pids in targets:
            runs[name].append(await measure(server(), tool_args, args.calls, pids))
    for name, results in runs.items():
        print(json.dumps({
            "target": name, "calls": args.calls, "rounds": args.rounds,
            "calls_per_sec": round(statistics.median(r[0] for r in results), 1),
            "server_cpu_us_per_call": round(statistics.median(r[1] for r in results), 1),
        }), flush=True)


asyncio.run(main())
