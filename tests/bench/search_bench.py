"""`search_text` through the official Python MCP client beside ripgrep (`rg`) on the same tree,
same patterns and equivalent options (smart case, hidden files searched, .gitignore honoured,
matching lines printed; line counts compared). Times are the median of several runs, after one warm-up run of each.

Prints one JSON object per pattern.
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


def rg(root, pattern):
    t0 = time.perf_counter()
    # The same job as search_text with its defaults: smart case (-S), every matching line
    # printed with its path and number.
    out = subprocess.run(["rg", "--hidden", "--no-messages", "-S", "-n", "-e", pattern, "."],
                         cwd=root, capture_output=True)
    wall = time.perf_counter() - t0
    return wall, out.stdout.count(b"\n")


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--project", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("patterns", nargs="+")
    args = ap.parse_args()
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {os.environ['SLUICE_TOKEN']}"},
                              timeout=120)
    async with Client(streamable_http_client(args.url, http_client=http), mode="legacy",
                      cache=None) as client:
        for pattern in args.patterns:
            call = {"project": args.project, "pattern": pattern, "max_results": 2000,
                    "max_matches_per_file": 2000, "timeout_ms": 60000, "include_hidden": True}
            await client.call_tool("search_text", call)
            rg(args.root, pattern)
            ours, theirs, hits, rg_hits, truncated = [], [], 0, 0, False
            for _ in range(args.runs):
                t0 = time.perf_counter()
                res = await client.call_tool("search_text", call)
                ours.append(time.perf_counter() - t0)
                assert not res.is_error, res
                hits = len(res.structured_content["matches"])
                truncated = res.structured_content["truncated"]
                wall, rg_hits = rg(args.root, pattern)
                theirs.append(wall)
            s, r = statistics.median(ours), statistics.median(theirs)
            print(json.dumps({
                "pattern": pattern, "sluice_ms": round(s * 1e3, 1), "rg_ms": round(r * 1e3, 1),
                "ratio": round(s / r, 2), "sluice_hits": hits, "rg_hits": rg_hits,
                "truncated": truncated,
            }), flush=True)


asyncio.run(main())
