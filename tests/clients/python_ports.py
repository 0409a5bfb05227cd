"""Drives Sluice's dev servers with the official Python MCP SDK over Streamable HTTP: a job
that publishes a port asks the user first and the card says so; `python3 -m http.server` in the
job's sandbox becomes ready (an HTTP wait), is fetched by the assistant's tool and by headless
Chromium as the user's browser would open its link; what the shield hides stays hidden through
it; a port the job did not publish, a review token and a stranger's project are refused; the
server is gone after cancel_job and after the emergency stop. The human side is played through
the real CLI. Exits non-zero on the first failed check.

Environment: SLUICE_TOKEN (full), SLUICE_REVIEW_TOKEN (review profile), SLUICE_CANARY.
Arguments: --url, --sluice BIN, --chromium BIN. Project: "demo" (any mode, network off), with
hello.txt in it.
"""

import argparse
import asyncio
import json
import os
import socket
import urllib.parse

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import common
from common import approving, call, check, ok, refused, sluice


STATIC = ["-u", "-m", "http.server", "8000", "-b", "127.0.0.1"]

# A server that answers with where it runs, in a header and in the body: what an assistant
# gets back must not name the physical folder. It says when it listens.
WHERE = ["-u", "-c", """
import http.server, os
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        here = os.getcwd().encode()
        self.send_response(200)
        self.send_header("X-Where", here.decode())
        self.send_header("Content-Length", str(len(here)))
        self.end_headers()
        self.wfile.write(here)
s = http.server.HTTPServer(("127.0.0.1", 8000), H)
print("listening on", s.server_address[1])
s.serve_forever()
"""]


async def start_server(client, binary, ready, program=STATIC):
    args = {"project": "demo", "program": "python3", "args": program,
            "publish": [8000], "ready": ready}
    res, approved = await approving(binary, asyncio.create_task(call(client, "start_job", args)),
                                    "start_job")
    asked = [a["summary"] for a in approved]
    check(len(asked) == 1, "a job that publishes a port asks exactly once",
          (asked, res.structured_content))
    check("publishes port 8000" in asked[0], "the card says the port is published", asked[0])
    check(not res.is_error, "the approved server starts", res.structured_content)
    job = res.structured_content
    check(job["ready"] == "ready", "the readiness wait saw the server answer", job)
    check(len(job["ports"]) == 1 and job["ports"][0]["port"] == 8000, "port 8000 published", job)
    url = job["ports"][0]["url"]
    check(url.startswith("http://127.0.0.1:"), "the link is on this computer's loopback", url)
    return job["job_id"], url


def closed(url):
    """Whether nothing listens at `url` any more."""
    parsed = urllib.parse.urlparse(url)
    try:
        socket.create_connection((parsed.hostname, parsed.port), timeout=2).close()
        return False
    except OSError:
        return True


async def gone(url):
    for _ in range(200):
        if closed(url):
            return True
        await asyncio.sleep(0.05)
    return False


async def chromium(binary, url):
    proc = await asyncio.create_subprocess_exec(
        binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={os.environ['HOME']}/chromium-profile", "--dump-dom", url,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    return out.decode(errors="replace")


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--sluice", required=True)
    ap.add_argument("--chromium", required=True)
    args = ap.parse_args()

    def connect(token):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=600)
        return Client(streamable_http_client(args.url, http_client=http), cache=None)

    async with connect(os.environ["SLUICE_TOKEN"]) as client, \
            connect(os.environ["SLUICE_REVIEW_TOKEN"]) as review:
        tools = {t.name for t in (await client.list_tools()).tools}
        check("fetch_from_job" in tools, "fetch_from_job is offered to a full token", tools)

        job, url = await start_server(client, args.sluice, {"http_path": "/"})
        page = await ok(client, "fetch_from_job", {"job_id": job, "port": 8000,
                                                   "path": "/hello.txt"})
        check(page["status"] == 200 and "HELLO-SERVED" in page["body"],
              "the assistant fetches the job's server", page)
        listing = await ok(client, "fetch_from_job", {"job_id": job, "port": 8000})
        check("hello.txt" in listing["body"], "the listing names the project's file", listing)
        # The shield's .env is an empty file inside the job: its server cannot serve the secret.
        env = await ok(client, "fetch_from_job", {"job_id": job, "port": 8000, "path": "/.env"})
        check(os.environ["SLUICE_CANARY"] not in env["body"], "the shield holds through it", env)
        where = await ok(client, "fetch_from_job", {"job_id": job, "port": 8000,
                                                    "path": "/where.txt"})
        physical = os.environ["SLUICE_PATHS"].split(":")
        check(where["status"] == 200 and not any(p in where["body"] for p in physical)
              and "root=./src data=<sluice-data>/db" in where["body"],
              "an answer naming physical paths is redacted like job output", where)
        head = await ok(client, "fetch_from_job", {"job_id": job, "port": 8000,
                                                   "path": "/hello.txt", "method": "HEAD"})
        check(head["status"] == 200 and head["body"] == "", "HEAD has no body", head)

        # `sluice jobs` names the link too (the engine records it as the job starts).
        listed = []
        for _ in range(100):
            code, out, err = await sluice(args.sluice, "jobs", "--json")
            check(code == 0, "sluice jobs works", err)
            listed = [j for j in json.loads(out) if j["id"] == job]
            if listed and listed[0]["ports"]:
                break
            await asyncio.sleep(0.05)
        check(listed and listed[0]["ports"] == [{"port": 8000, "url": url}],
              "sluice jobs names the published port and its link", listed)
        code, out, err = await sluice(args.sluice, "jobs")
        check(f"8000 → {url}" in out, "sluice jobs says it in words", out)

        dom = await chromium(args.chromium, url + "hello.txt")
        check("HELLO-SERVED" in dom, "headless Chromium opens the link as the user would", dom)

        await refused(client, "fetch_from_job", {"job_id": job, "port": 9000},
                      "port_not_published")
        await refused(client, "fetch_from_job", {"job_id": job, "port": 8000,
                                                 "path": "http://example.com/"},
                      "invalid_argument")
        await refused(client, "fetch_from_job", {"job_id": job, "port": 8000,
                                                 "headers": {"Host": "example.com"}},
                      "invalid_argument")
        await refused(review, "fetch_from_job", {"job_id": job, "port": 8000}, "outside_profile")

        stopped = await ok(client, "cancel_job", {"job_id": job})
        check(stopped["state"] == "cancelled" and stopped["ports"] == [],
              "a cancelled job publishes nothing", stopped)
        check(await gone(url), "the link is closed after cancel_job", url)
        for _ in range(100):
            code, out, err = await sluice(args.sluice, "jobs", "--json")
            ended = [j for j in json.loads(out) if j["id"] == job]
            if ended and ended[0]["state"] == "cancelled":
                break
            await asyncio.sleep(0.05)
        check(ended and ended[0]["ports"] == [], "an ended job lists no port", ended)
        await refused(client, "fetch_from_job", {"job_id": job, "port": 8000},
                      "port_not_published")

        job, url = await start_server(client, args.sluice, {"port": 8000})
        check(not closed(url), "the second server is reachable", url)
        code, _, err = await sluice(args.sluice, "stop")
        check(code == 0, "the emergency stop works", err)
        check(await gone(url), "the link is closed after the emergency stop", url)
        code, _, err = await sluice(args.sluice, "resume")
        check(code == 0, "resume works", err)

        # A wait for a line of the server's output (it prints this once it listens).
        job, url = await start_server(client, args.sluice, {"log_pattern": r"^listening on 8000"},
                                      WHERE)
        check(not closed(url), "the server is up once its line is out", url)
        here = await ok(client, "fetch_from_job", {"job_id": job, "port": 8000})
        said = [h["value"] for h in here["headers"] if h["name"].lower() == "x-where"]
        check(said == ["."] and here["body"] == ".",
              "a server naming its folder is redacted in headers and body", here)
        await ok(client, "cancel_job", {"job_id": job})
    print(f"OK {common.no_canary_anywhere()} checks")


asyncio.run(main())
