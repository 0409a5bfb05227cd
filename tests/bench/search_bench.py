"""One `search_text` call through the official Python MCP client, timed warm, for the search
section of `cargo xtask bench` (crates/xtask/src/bench_search.rs, which times the same call over
plain HTTP beside ripgrep and compares the hits): what this client adds on top of the server.

Prints one JSON object: the median wall time of `--runs` calls after one warm-up call.
"""

import argparse
import asyncio
import json
import os
import statistics
import time

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--args", required=True, help="search_text's arguments, as JSON")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    call = json.loads(args.args)
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {os.environ['SLUICE_TOKEN']}"},
                              timeout=120)
    async with Client(streamable_http_client(args.url, http_client=http), mode="legacy",
                      cache=None) as client:
        await client.call_tool("search_text", call)
        times, hits = [], 0
        for _ in range(args.runs):
            t0 = time.perf_counter()
            res = await client.call_tool("search_text", call)
            times.append(time.perf_counter() - t0)
            assert not res.is_error, res
            hits = len(res.structured_content["matches"])
        print(json.dumps({"sdk_ms": round(statistics.median(times) * 1e3, 1), "hits": hits}),
              flush=True)


asyncio.run(main())
