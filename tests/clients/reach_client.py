"""Reach from the web, end to end: the official Python MCP SDK's OAuth client (discovery, dynamic
registration, PKCE, resource indicators, refresh) connects to Sluice through the tunnel Sluice
runs (tunnel_edge.py: HTTPS with a test certificate, the Host header passed through as tunnels do), a
person approves in Sluice's CLI after comparing the code the consent page shows, and then the
attacks: a wrong redirect URI, a missing PKCE verifier, a token for another resource, a replayed
code, a refresh token reused after rotation, tokens across the two doors, a revoked remote token,
and reach turned off mid-session. The script asserts; it prints `OK <checks>` at the end."""

import argparse
import asyncio
import base64
import hashlib
import json
import os
import re
import secrets
import ssl
import subprocess
from urllib.parse import parse_qs, urlencode, urlparse

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

import common
from common import check, ok, refused

REDIRECT = "http://localhost:33418/callback"
args = None


def sluice(*argv):
    out = subprocess.run([args.sluice, *argv], capture_output=True, text=True)
    check(out.returncode == 0, f"sluice {' '.join(argv)}", out.stderr)
    return out.stdout


class Memory(TokenStorage):
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, info):
        self.client = info


class Person:
    """The person's browser, and the person at Sluice's CLI who approves only the request whose
    code the browser shows."""

    def __init__(self, base, verify):
        self.base = base
        self.http = httpx2.AsyncClient(verify=verify, timeout=30)
        self.result = None

    async def start(self, url):
        """Opens the authorization URL; returns the consent page's path."""
        r = await self.http.get(url)
        check(r.status_code == 303, "authorize answers with the consent page", (r.status_code, r.text))
        consent = r.headers["location"]
        check(consent.startswith("/oauth/consent/slrq_"), "the consent page's address", consent)
        return consent

    async def decide(self, consent, approve=True):
        """Reads the code on the page, finds the same code in `sluice reach requests`, decides,
        and returns where the browser is sent."""
        page = await self.http.get(self.base + consent)
        check(page.status_code == 200 and "Connect to Sluice?" in page.text, "consent page", page.text)
        check("<script" not in page.text, "the consent page runs no script", page.text)
        check(
            "frame-ancestors 'none'" in page.headers.get("content-security-policy", ""),
            "the consent page is never framed",
            dict(page.headers),
        )
        code = re.search(r"class=code>([A-Z0-9]{4}-[A-Z0-9]{4})<", page.text)
        check(code is not None, "the page shows a code", page.text)
        request_id = consent.rsplit("/", 1)[1]
        listed = sluice("reach", "requests")
        line = next((l for l in listed.splitlines() if l.startswith(request_id)), "")
        check(code.group(1) in line, "Sluice lists the request with the same code", listed)
        # Nothing the browser does decides: the page is only read.
        again = await self.http.get(self.base + consent)
        check(again.status_code == 200, "still waiting until the person decides", again.status_code)
        sluice("reach", "approve" if approve else "deny", request_id)
        done = await self.http.get(self.base + consent)
        check(done.status_code == 303, "the browser continues once decided", done.status_code)
        if approve:
            after = await self.http.get(self.base + consent)
            check(after.status_code == 410, "the consent page hands out one code", after.status_code)
        return done.headers["location"]

    async def redirect_handler(self, url):
        location = await self.decide(await self.start(url))
        q = parse_qs(urlparse(location).query)
        check(location.startswith(REDIRECT) and "code" in q, "approved: back with a code", location)
        check(q.get("iss") == [self.base], "the response names the issuer (RFC 9207)", q)
        self.result = AuthorizationCodeResult(
            code=q["code"][0], state=q.get("state", [None])[0], iss=q["iss"][0]
        )

    async def callback_handler(self):
        return self.result


def oauth_provider(mcp_url, person, storage, name, **extra):
    """The SDK's OAuth client as a hosted assistant uses it: a public client with PKCE, back
    through the person's browser; `extra` goes to the provider (a metadata URL)."""
    return OAuthClientProvider(
        server_url=mcp_url,
        client_metadata=OAuthClientMetadata(
            client_name=name,
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=person.redirect_handler,
        callback_handler=person.callback_handler,
        **extra,
    )


def pkce():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
    return verifier, challenge.decode()


async def rpc(http, url, token, method="tools/list"):
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {}}
    if method == "initialize":
        body["params"] = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "reach-test", "version": "1"},
        }
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return await http.post(url, content=json.dumps(body), headers=headers)


async def main():
    global args
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="the public address Sluice's tunnel announced")
    ap.add_argument("--ca", required=True, help="the tunnel edge's test certificate")
    ap.add_argument("--local-url", required=True)
    ap.add_argument("--sluice", required=True)
    args = ap.parse_args()
    base = args.base
    mcp_url = f"{base}/mcp"
    local_token = os.environ["SLUICE_TOKEN"]

    verify = ssl.create_default_context(cafile=args.ca)
    raw = httpx2.AsyncClient(verify=verify, timeout=30)
    plain = httpx2.AsyncClient(timeout=30)

    # The resource server's challenge and metadata point to the authorization server.
    r = await rpc(raw, mcp_url, None, "initialize")
    check(r.status_code == 401, "no token: 401", r.status_code)
    check(
        f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
        in r.headers.get("www-authenticate", ""),
        "the 401 names the resource metadata (RFC 9728)",
        dict(r.headers),
    )
    prm = (await raw.get(f"{base}/.well-known/oauth-protected-resource/mcp")).json()
    check(prm["resource"] == mcp_url and prm["authorization_servers"] == [base], "PRM", prm)
    asm = (await raw.get(f"{base}/.well-known/oauth-authorization-server")).json()
    check(asm["issuer"] == base and asm["code_challenge_methods_supported"] == ["S256"], "ASM", asm)
    # The local door never advertises OAuth, so local clients stay on their header.
    r = await rpc(plain, args.local_url, None, "initialize")
    check("resource_metadata" not in r.headers.get("www-authenticate", ""), "local 401 is bare", dict(r.headers))

    # ----- 1. The SDK's own flow, start to finish ---------------------------------------------
    person = Person(base, verify)
    storage = Memory()
    provider = oauth_provider(mcp_url, person, storage, "Reach test")
    http = httpx2.AsyncClient(auth=provider, verify=verify, timeout=30)
    async with Client(streamable_http_client(mcp_url, http_client=http), cache=None) as client:
        listed = await ok(client, "list_projects", {})
        names = [p["name"] for p in listed["projects"]]
        check(names == ["demo"], "a remote token sees the exposed project", listed)
        read = await ok(client, "read_file", {"project": "demo", "path": "README.md"})
        check("hello" in json.dumps(read), "reads through the tunnel", read)
        await refused(
            client, "write_file", {"project": "demo", "path": "x.txt", "content": "x"},
            {"read_only_project"},
        )
        # Read-only touches nothing: not even a job the person's local client started.
        job_id = os.environ["SLUICE_JOB_ID"]
        err = await refused(client, "cancel_job", {"job_id": job_id}, {"forbidden"})
        check("read-only" in err.get("message", ""), "the refusal says why", err)
        status = await ok(client, "job_status", {"job_id": job_id})
        check(status["state"] == "running", "the job runs on", status)
    access1 = storage.tokens.access_token
    refresh1 = storage.tokens.refresh_token
    check(access1.startswith("slr_") and refresh1.startswith("slf_"), "token kinds", storage.tokens)
    client_id = storage.client.client_id

    # ----- 2. Each token works at its own door only -------------------------------------------
    r = await rpc(plain, args.local_url, access1)
    check(r.status_code == 401, "a remote token is refused on the local port", r.status_code)
    r = await rpc(raw, mcp_url, local_token)
    check(r.status_code == 401, "a local token is refused through the tunnel", r.status_code)
    r = await rpc(raw, mcp_url, access1)
    check(r.status_code == 200, "the remote token works through the tunnel", r.status_code)
    r = await raw.post(f"{base}/mcp?access_token={access1}", content=b"{}")
    check(r.status_code in (400, 401), "no token in a query string", r.status_code)

    # ----- 3. Refresh rotates; the spent refresh token presented again revokes the grant ------
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    r = await raw.post(f"{base}/oauth/token", headers=form, content=urlencode(
        {"grant_type": "refresh_token", "refresh_token": refresh1, "client_id": client_id}))
    check(r.status_code == 200, "refresh", r.text)
    access2, refresh2 = r.json()["access_token"], r.json()["refresh_token"]
    check(refresh2 != refresh1 and access2 != access1, "both rotate", r.json())
    check((await rpc(raw, mcp_url, access2)).status_code == 200, "the new access token works")
    check((await rpc(raw, mcp_url, access1)).status_code == 401, "the old access token does not")
    r = await raw.post(f"{base}/oauth/token", headers=form, content=urlencode(
        {"grant_type": "refresh_token", "refresh_token": refresh1, "client_id": client_id}))
    check(r.status_code == 400 and r.json()["error"] == "invalid_grant", "refresh reuse", r.text)
    check((await rpc(raw, mcp_url, access2)).status_code == 401, "reuse revoked the grant")
    r = await raw.post(f"{base}/oauth/token", headers=form, content=urlencode(
        {"grant_type": "refresh_token", "refresh_token": refresh2, "client_id": client_id}))
    check(r.status_code == 400, "the grant's newest refresh token is dead too", r.text)

    # ----- 4. Registration and authorization refusals -----------------------------------------
    r = await raw.post(f"{base}/oauth/register", json={
        "client_name": "evil", "redirect_uris": ["https://evil.example/cb"]})
    check(r.status_code == 400 and r.json()["error"] == "invalid_redirect_uri", "foreign redirect", r.text)
    r = await raw.post(f"{base}/oauth/register", json={
        "client_name": "Manual", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"})
    check(r.status_code == 201, "registration", r.text)
    manual = r.json()["client_id"]

    def authorize_url(challenge, **extra):
        q = {"response_type": "code", "client_id": manual, "redirect_uri": REDIRECT,
             "state": "st8", "code_challenge": challenge, "code_challenge_method": "S256",
             "resource": mcp_url}
        q.update(extra)
        return f"{base}/oauth/authorize?{urlencode({k: v for k, v in q.items() if v is not None})}"

    verifier, challenge = pkce()
    r = await person.http.get(authorize_url(challenge, redirect_uri="https://claude.ai/api/mcp/auth_callback"))
    check(r.status_code == 400 and "location" not in r.headers, "an unregistered redirect is never followed", r.status_code)
    r = await person.http.get(authorize_url(None, code_challenge_method=None))
    q = parse_qs(urlparse(r.headers.get("location", "")).query)
    check(r.status_code == 303 and q.get("error") == ["invalid_request"] and q.get("state") == ["st8"],
          "PKCE is required", (r.status_code, r.headers.get("location")))
    r = await person.http.get(authorize_url(challenge, resource="https://other.example/mcp"))
    q = parse_qs(urlparse(r.headers.get("location", "")).query)
    check(q.get("error") == ["invalid_target"], "a foreign resource is refused", r.headers.get("location"))
    r = await person.http.get(authorize_url(challenge) + "&state=again")
    check(r.status_code == 400, "a parameter given twice is refused", r.status_code)

    async def code_for(challenge, approve=True):
        loc = await person.decide(await person.start(authorize_url(challenge)), approve)
        return parse_qs(urlparse(loc).query)

    async def exchange(code, verifier, **extra):
        body = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                "client_id": manual, "code_verifier": verifier, "resource": mcp_url}
        body.update(extra)
        body = {k: v for k, v in body.items() if v is not None}
        return await raw.post(f"{base}/oauth/token", headers=form, content=urlencode(body))

    # Denied: back with access_denied, and no code.
    q = await code_for(challenge, approve=False)
    check(q.get("error") == ["access_denied"] and "code" not in q, "denied", q)

    # A missing verifier, or another redirect URI: refused, and the code is spent (a stolen code
    # gets one try).
    for label, verifier_sent, extra in (
        ("no verifier", None, {}),
        ("another verifier", pkce()[0], {}),
        ("another redirect URI", verifier, {"redirect_uri": "http://localhost:1/other"}),
    ):
        code = (await code_for(challenge))["code"][0]
        r = await exchange(code, verifier_sent, **extra)
        check(r.status_code == 400 and r.json()["error"] == "invalid_grant", label, r.text)
        r = await exchange(code, verifier)
        check(r.status_code == 400, f"a code tried with {label} is spent", r.text)

    # A token for another resource: refused, the code still unspent; then exchanged; then a replay
    # revokes what it bought.
    code = (await code_for(challenge))["code"][0]
    r = await exchange(code, verifier, resource="https://other.example/mcp")
    check(r.status_code == 400 and r.json()["error"] == "invalid_target", "another resource", r.text)
    r = await exchange(code, verifier)
    check(r.status_code == 200 and r.headers.get("cache-control") == "no-store", "exchange", r.text)
    access3 = r.json()["access_token"]
    check((await rpc(raw, mcp_url, access3)).status_code == 200, "the new token works")
    r = await exchange(code, verifier)
    check(r.status_code == 400 and r.json()["error"] == "invalid_grant", "replayed code", r.text)
    check((await rpc(raw, mcp_url, access3)).status_code == 401, "the replay revoked the token")

    # ----- 5. A remote token the user revokes --------------------------------------------------
    code = (await code_for(challenge))["code"][0]
    access4 = (await exchange(code, verifier)).json()["access_token"]
    check((await rpc(raw, mcp_url, access4)).status_code == 200, "works before revocation")
    tokens = json.loads(sluice("token", "list", "--json"))
    tokens = tokens["tokens"] if isinstance(tokens, dict) else tokens
    remote = [t for t in tokens if t["label"].startswith("remote: ") and not t.get("revoked_ms")]
    check(len(remote) == 1, "Tokens lists the one live remote token", tokens)
    sluice("token", "revoke", remote[0]["id"])
    check((await rpc(raw, mcp_url, access4)).status_code == 401, "revoked at once")

    # ----- 6. Reach turned off mid-session -----------------------------------------------------
    code = (await code_for(challenge))["code"][0]
    access5 = (await exchange(code, verifier)).json()["access_token"]
    check((await rpc(raw, mcp_url, access5)).status_code == 200, "works while reach is on")
    sluice("reach", "off")
    try:
        r = await rpc(raw, mcp_url, access5)
        refused_now = r.status_code in (401, 404)
    except httpx2.HTTPError:
        refused_now = True
    check(refused_now, "reach off cuts the session at once")
    local = args.local_url.replace("/mcp", "")
    r = await plain.post(f"{local}/oauth/token", content=b"grant_type=x",
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
    check(r.status_code != 200 and "grant" not in r.text, "the local port has no token endpoint",
          (r.status_code, r.text))
    r = await plain.get(f"{local}/.well-known/oauth-protected-resource/mcp")
    check("authorization_servers" not in r.text, "nor OAuth metadata", (r.status_code, r.text))

    print(f"OK {common.checks} checks")
    os._exit(0)


if __name__ == "__main__":
    asyncio.run(main())
