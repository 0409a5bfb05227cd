"""Latency of the change tools beside the read path, through the official Python MCP client
over HTTP: read_file, write_file (replace with the expected hash), apply_patch touching 10
files; and the approval round trip — a delete_path call, the approval becoming visible to the
user (polled through `sluice approvals list`, as the window would see the event), the user's
decision (`sluice approvals approve`), and the call's result.

Prints one JSON object per measure (median and p90 in milliseconds).
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import time

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def stats(name, samples):
    samples = sorted(samples)
    p90 = samples[int(len(samples) * 0.9) - 1]
    print(json.dumps({"measure": name, "n": len(samples),
                      "median_ms": round(statistics.median(samples) * 1e3, 2),
                      "p90_ms": round(p90 * 1e3, 2)}), flush=True)


def sluice(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True, check=True).stdout


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--sluice", required=True)
    ap.add_argument("--project", default="bench")
    ap.add_argument("--n", type=int, default=200)
    args = ap.parse_args()
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {os.environ['SLUICE_TOKEN']}"},
                              timeout=60)
    p = {"project": args.project}
    async with Client(streamable_http_client(args.url, http_client=http), mode="legacy",
                      cache=None) as c:
        async def timed(tool, a):
            t0 = time.perf_counter()
            r = await c.call_tool(tool, a)
            assert not r.is_error, r.structured_content
            return time.perf_counter() - t0, r.structured_content

        for i in range(10):
            await timed("write_file", {**p, "path": f"w/f{i}.txt", "content": "line\n" * 50,
                                       "create_parents": True})
        reads, writes, patches = [], [], []
        h = (await timed("read_file", {**p, "path": "w/f0.txt"}))[1]["hash"]
        for k in range(args.n):
            reads.append((await timed("read_file", {**p, "path": "w/f0.txt"}))[0])
            dt, out = await timed("write_file", {**p, "path": "w/f0.txt", "expected_hash": h,
                                                 "content": f"line {k}\n" * 50})
            writes.append(dt)
            h = out["files"][0]["hash_after"]
        for k in range(args.n // 4):
            old, new = ("line", "LINE") if k % 2 == 0 else ("LINE", "line")
            body = "".join(
                f"*** Update File: w/f{i}.txt\n@@\n-{old}\n+{new}\n line\n"
                for i in range(1, 10))
            # f1..f9 plus a new file: 10 files in one all-or-nothing patch.
            body += f"*** Add File: w/n{k}.txt\n+new\n"
            dt, _ = await timed("apply_patch", {**p, "patch": f"*** Begin Patch\n{body}*** End Patch\n"})
            patches.append(dt)
        stats("read_file", reads)
        stats("write_file", writes)
        stats("apply_patch_10_files", patches)

        rounds, visible, decided = [], [], []
        for k in range(20):
            await timed("write_file", {**p, "path": f"d/x{k}.txt", "content": "x", "create_parents": True})
            t0 = time.perf_counter()
            call = asyncio.create_task(c.call_tool("delete_path", {**p, "path": f"d/x{k}.txt"}))
            while True:
                pending = [a for a in json.loads(sluice(args.sluice, "approvals", "list", "--json"))
                           if a["state"] == "pending"]
                if pending:
                    break
                await asyncio.sleep(0.005)
            t1 = time.perf_counter()
            sluice(args.sluice, "approvals", "approve", pending[0]["id"])
            t2 = time.perf_counter()
            res = await call
            assert not res.is_error, res.structured_content
            t3 = time.perf_counter()
            visible.append(t1 - t0)
            decided.append(t3 - t2)
            rounds.append(t3 - t0)
        stats("approval: call until visible to the user", visible)
        stats("approval: decision until the call returns", decided)
        stats("approval: whole round trip (CLI as the user)", rounds)


asyncio.run(main())
