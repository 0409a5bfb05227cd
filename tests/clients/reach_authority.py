"""Reach from the web, what a grant may do after the person changes their mind (issue 37), through
the official Python MCP SDK's OAuth client and the tunnel Sluice runs (tunnel_edge.py):

1. Narrowing reach to one project takes the other from a token issued before the change and
   from one refreshed after it, at their next request; widening it again gives an old grant
   nothing back (writes included): that needs a new consent.
2. A read-only remote token cancels and runs nothing, not even a job the person's local client
   started, with a refusal that says why; a write-capable one ends only jobs it started.
3. A client that registered itself under a verified-looking name is shown as unverified on the
   consent page and in `sluice reach requests`.
4. A flood of registrations and connection requests from one source (the address the tunnel
   reports, X-Forwarded-For as a tunnel appends it) leaves the person's own assistant able to
   connect.

The script asserts; it prints `OK <checks>` at the end."""

import argparse
import asyncio
import json
import os
import re
from urllib.parse import urlencode

import httpx2
import ssl
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import common
import reach_client as rc
from common import check, ok, refused

PERSON = "198.51.100.7"
STRANGER = "203.0.113.66"


def forwarded_from(address):
    """A request hook adding the client address as a tunnel appends it: every request the client
    sends, the SDK's own OAuth requests included."""

    async def hook(request):
        request.headers["X-Forwarded-For"] = address

    return {"request": [hook]}


def reach_on(*extra):
    """`sluice reach on` with the tunnel already running (the same command keeps it and its
    address), and `extra`: the projects and the write setting."""
    rc.sluice(*json.loads(os.environ["SLUICE_REACH_ON"]), *extra)


async def served(base, verify):
    """Waits until the listener for the new setting answers: the old one says "try again" from
    the moment the setting changed, and the new one binds within a moment."""
    http = httpx2.AsyncClient(verify=verify, timeout=10)
    last = None
    for _ in range(400):
        try:
            r = await http.get(f"{base}/.well-known/oauth-authorization-server")
            if r.status_code == 200:
                return
            last = (r.status_code, r.text)
        except httpx2.HTTPError as e:
            last = repr(e)
        await asyncio.sleep(0.05)
    check(False, "the remote front follows the new setting", last)


async def connect(base, verify, name, address=PERSON):
    """The person's assistant connects through the SDK's OAuth flow and the person approves;
    returns its stored tokens and client."""
    mcp_url = f"{base}/mcp"
    person = rc.Person(base, verify)
    person.http = httpx2.AsyncClient(verify=verify, timeout=30, event_hooks=forwarded_from(address))
    storage = rc.Memory()
    provider = rc.oauth_provider(mcp_url, person, storage, name)
    http = httpx2.AsyncClient(auth=provider, verify=verify, timeout=30, event_hooks=forwarded_from(address))
    async with Client(streamable_http_client(mcp_url, http_client=http), cache=None) as client:
        await ok(client, "list_projects", {})
    return storage


def with_token(mcp_url, verify, token):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, verify=verify, timeout=30)
    return Client(streamable_http_client(mcp_url, http_client=http), cache=None)


async def sees(mcp_url, verify, token):
    async with with_token(mcp_url, verify, token) as client:
        listed = await ok(client, "list_projects", {})
        return sorted(p["name"] for p in listed["projects"])


async def refresh(base, verify, storage):
    r = await httpx2.AsyncClient(verify=verify, timeout=30).post(
        f"{base}/oauth/token",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        content=urlencode({"grant_type": "refresh_token", "refresh_token": storage.tokens.refresh_token,
                           "client_id": storage.client.client_id}),
    )
    check(r.status_code == 200, "refresh", r.text)
    storage.tokens.access_token = r.json()["access_token"]
    storage.tokens.refresh_token = r.json()["refresh_token"]
    return storage.tokens.access_token


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--ca", required=True)
    ap.add_argument("--sluice", required=True)
    rc.args = ap.parse_args()
    base = rc.args.base
    mcp_url = f"{base}/mcp"
    verify = ssl.create_default_context(cafile=rc.args.ca)
    job_id = os.environ["SLUICE_JOB_ID"]

    # ----- 1. Narrowing applies at the next request; widening needs a new consent --------------
    first = await connect(base, verify, "Narrowed")
    access_before = first.tokens.access_token
    check(await sees(mcp_url, verify, access_before) == ["demo", "other"], "both projects at first")
    async with with_token(mcp_url, verify, access_before) as client:
        await ok(client, "read_file", {"project": "other", "path": "notes.txt"})
        # Read-only: no change, no command, no ending a job, its own or the person's.
        err = await refused(client, "cancel_job", {"job_id": job_id}, {"forbidden"})
        check("read-only" in err.get("message", ""), "the refusal says why", err)
        await refused(client, "start_job", {"project": "demo", "program": "sleep", "args": ["1"]},
                      {"forbidden", "exec_disabled", "read_only_project"})
        await refused(client, "write_file", {"project": "demo", "path": "x.txt", "content": "x"},
                      {"read_only_project"})
        status = await ok(client, "job_status", {"job_id": job_id})
        check(status["state"] == "running", "the person's job runs on", status)

    reach_on("--project", "demo")
    await served(base, verify)
    # The token issued before the change: the other project is gone at its next request.
    check(await sees(mcp_url, verify, access_before) == ["demo"], "the old access token is narrowed")
    async with with_token(mcp_url, verify, access_before) as client:
        await refused(client, "read_file", {"project": "other", "path": "notes.txt"}, {"project_not_found"})
    # A token refreshed after the change: narrowed too.
    refreshed = await refresh(base, verify, first)
    check(await sees(mcp_url, verify, refreshed) == ["demo"], "the refreshed token is narrowed")
    async with with_token(mcp_url, verify, refreshed) as client:
        await refused(client, "read_file", {"project": "other", "path": "notes.txt"}, {"project_not_found"})

    # Widened again, and writable: the old grant gets neither back.
    reach_on("--project", "demo", "--project", "other", "--write")
    await served(base, verify)
    refreshed = await refresh(base, verify, first)
    check(await sees(mcp_url, verify, refreshed) == ["demo"], "widening reaches no old grant")
    async with with_token(mcp_url, verify, refreshed) as client:
        await refused(client, "write_file", {"project": "demo", "path": "x.txt", "content": "x"},
                      {"read_only_project"})
        await refused(client, "cancel_job", {"job_id": job_id}, {"forbidden"})

    # A new consent, given while reach writes: both projects, writes, and still not the
    # person's job.
    second = await connect(base, verify, "Consented again")
    fresh = second.tokens.access_token
    check(await sees(mcp_url, verify, fresh) == ["demo", "other"], "a new consent sees what reach exposes")
    async with with_token(mcp_url, verify, fresh) as client:
        await ok(client, "write_file", {"project": "demo", "path": "remote.txt", "content": "hi"})
        err = await refused(client, "cancel_job", {"job_id": job_id}, {"forbidden"})
        check("ends only the jobs it started" in err.get("message", ""), "a writer ends only its own jobs, and says so", err)
        status = await ok(client, "job_status", {"job_id": job_id})
        check(status["state"] == "running", "the person's job still runs", status)
    # Narrowed back to read-only: the new grant loses its writes at its next request.
    reach_on("--project", "demo", "--project", "other")
    await served(base, verify)
    async with with_token(mcp_url, verify, fresh) as client:
        await refused(client, "write_file", {"project": "demo", "path": "y.txt", "content": "y"},
                      {"read_only_project"})

    # ----- 2. A registered client borrowing a verified look is shown as unverified -------------
    impostor = httpx2.AsyncClient(verify=verify, timeout=30, event_hooks=forwarded_from("192.0.2.50"))
    borrowed = "Claude (claude.ai)"
    r = await impostor.post(f"{base}/oauth/register", json={
        "client_name": borrowed, "redirect_uris": [rc.REDIRECT], "token_endpoint_auth_method": "none"})
    check(r.status_code == 201, "the impostor registers", r.text)
    _, challenge = rc.pkce()
    q = {"response_type": "code", "client_id": r.json()["client_id"], "redirect_uri": rc.REDIRECT,
         "state": "s", "code_challenge": challenge, "code_challenge_method": "S256", "resource": mcp_url}
    r = await impostor.get(f"{base}/oauth/authorize?{urlencode(q)}")
    check(r.status_code == 303, "the impostor's request waits", (r.status_code, r.text))
    consent = r.headers["location"]
    page = (await impostor.get(base + consent)).text
    check("\u201cClaude (claude.ai)\u201d</strong> (unverified name" in page, "the page marks the name unverified", page)
    check("verified:" not in page, "the page never calls it verified", page)
    request_id = consent.rsplit("/", 1)[1]
    listed = rc.sluice("reach", "requests")
    line = next((l for l in listed.splitlines() if l.startswith(request_id)), "")
    check("\u201cClaude (claude.ai)\u201d (unverified name)" in line, "the CLI marks it unverified", listed)
    check("(verified:" not in line, "the CLI never calls it verified", line)
    rc.sluice("reach", "deny", request_id)

    # ----- 3. A flood from one source leaves the person's assistant able to connect ------------
    stranger = httpx2.AsyncClient(verify=verify, timeout=30, event_hooks=forwarded_from(STRANGER))
    registered, asked, slowed = [], 0, 0
    # As fast as its budget lets it, until it has asked more often than there are places to
    # wait (8): without budgets per source that alone would lock everyone out.
    deadline = asyncio.get_running_loop().time() + 30
    while (asked < 12 or slowed == 0) and asyncio.get_running_loop().time() < deadline:
        r = await stranger.post(f"{base}/oauth/register", json={
            "client_name": f"Flood {len(registered)}", "redirect_uris": [rc.REDIRECT],
            "token_endpoint_auth_method": "none"})
        if r.status_code == 429:
            slowed += 1
            await asyncio.sleep(0.2)
            continue
        check(r.status_code == 201, "a stranger's registration", r.text)
        registered.append(r.json()["client_id"])
        for _ in range(3):
            q["client_id"] = registered[-1]
            r = await stranger.get(f"{base}/oauth/authorize?{urlencode(q)}")
            if r.status_code == 429:
                slowed += 1
                await asyncio.sleep(0.2)
            else:
                check(r.status_code == 303, "a stranger's request", (r.status_code, r.text))
                asked += 1
    check(slowed > 0 and asked >= 12, "the stranger flooded, and was slowed", (asked, slowed))
    # The person's own assistant connects in the middle of it.
    mine = await connect(base, verify, "Mine after the flood")
    check(await sees(mcp_url, verify, mine.tokens.access_token) == ["demo", "other"], "the person connected")
    listed = rc.sluice("reach", "requests")
    flood = [l for l in listed.splitlines() if "Flood " in l]
    check(len(flood) <= 2, "the stranger has at most two requests waiting", listed)

    print(f"OK {common.checks} checks")
    os._exit(0)


if __name__ == "__main__":
    asyncio.run(main())
