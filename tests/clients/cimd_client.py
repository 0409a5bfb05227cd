"""Client ID metadata documents, end to end, inside a network namespace of their own: the test
runs `sluice serve` there with `client.sluice.test` (and a few other names) in its /etc/hosts,
pointing at a routable address on the namespace's loopback device, and this script joins it.

`certs DIR` makes a test CA and a certificate for client.sluice.test (Sluice is started with the
CA as SSL_CERT_FILE). `run` serves metadata documents on client.sluice.test:443 and a decoy on
127.0.0.1:443, connects the official Python MCP SDK's OAuth client by its metadata URL (the
person approves in Sluice's CLI after checking the name and host the consent page and Sluice
show), then tries every way of making Sluice fetch from the local network or accept a document
it should not. It asserts as it goes and prints `OK <checks>`."""

import argparse
import asyncio
import json
import os
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, urlencode

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import common
import reach_client as rc
from common import check, ok

HOST = "client.sluice.test"
GOOD = f"https://{HOST}/good.json"
NAME = "CIMD <Test>"
REDIRECT = rc.REDIRECT
# Markup a client slips into what Sluice's page quotes back: a refresh would send the person's
# browser on from the tunnel's own origin, which the page's CSP (no scripts) does not stop.
MARKUP = '<meta http-equiv=refresh content="0;url=https://evil.example/">'


def document(client_id, **extra):
    doc = {
        "client_id": client_id,
        "client_name": NAME,
        "redirect_uris": [REDIRECT, "https://evil.example/cb"],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    doc.update(extra)
    return json.dumps(doc).encode()


def url(path):
    return f"https://{HOST}{path}"


# path -> (status, headers, body)
ROUTES = {
    "/good.json": (200, {}, document(GOOD)),
    "/moved.json": (302, {"Location": "https://inside.sluice.test/good.json"}, b""),
    "/big.json": (200, {}, document(url("/big.json"), padding="x" * 6000)),
    "/other.json": (200, {}, document(GOOD)),
    "/secret.json": (200, {}, document(url("/secret.json"), token_endpoint_auth_method="client_secret_basic")),
    "/foreign.json": (200, {}, document(url("/foreign.json"), redirect_uris=["https://evil.example/cb"])),
    "/html.json": (200, {"Content-Type": "text/html"}, document(url("/html.json"))),
    "/twice.json": (200, {}, b'{"client_id": "%s", "client_id": "%s", "redirect_uris": ["%s"]}'
                    % (url("/twice.json").encode(), GOOD.encode(), REDIRECT.encode())),
    "/slow.json": (200, {}, document(url("/slow.json"))),
    "/markup.json": (200, {}, document(url("/markup.json"), redirect_uris=MARKUP)),
}


def server(address, cert_dir, hits):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append((address[0], self.headers.get("Host"), self.path))
            status, headers, body = ROUTES.get(self.path, (404, {}, b"not here"))
            if self.path == "/slow.json":
                time.sleep(8)
            self.send_response(status)
            self.send_header("Content-Type", headers.get("Content-Type", "application/json"))
            for k, v in headers.items():
                if k != "Content-Type":
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    httpd = ThreadingHTTPServer(address, Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(cert_dir, "leaf.pem"), os.path.join(cert_dir, "leaf.key"))
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


class Person(rc.Person):
    """The person, who also reads who is asking: the name the document claims and its host."""

    async def start(self, url):
        consent = await super().start(url)
        page = await self.http.get(self.base + consent)
        shown = "<strong>CIMD &lt;Test&gt;</strong> (verified: its metadata document is at client.sluice.test)"
        check(shown in page.text, "the consent page names the client and its document's host", page.text)
        check("unverified" not in page.text, "a client named by its document is not called unverified", page.text)
        listed = rc.sluice("reach", "requests")
        check(f"{NAME} (verified: {HOST})" in listed, "Sluice shows the same name and host", listed)
        return consent


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--ca", required=True, help="the tunnel edge's certificate")
    ap.add_argument("--certs", required=True, help="the folder `certs` wrote")
    ap.add_argument("--address", required=True, help="client.sluice.test's address")
    ap.add_argument("--sluice", required=True)
    args = ap.parse_args()
    rc.args = args
    base, mcp_url = args.base, f"{args.base}/mcp"
    verify = ssl.create_default_context(cafile=args.ca)
    hits = []
    server((args.address, 443), args.certs, hits)
    server(("127.0.0.1", 443), args.certs, hits)

    asm = (await httpx2.AsyncClient(verify=verify).get(f"{base}/.well-known/oauth-authorization-server")).json()
    check(asm.get("client_id_metadata_document_supported") is True, "the server says it takes CIMD", asm)

    # ----- 1. The SDK connects by its metadata URL -------------------------------------------
    person = Person(base, verify)
    storage = rc.Memory()
    name = "ignored: the document names the client"
    provider = rc.oauth_provider(mcp_url, person, storage, name, client_metadata_url=GOOD)
    http = httpx2.AsyncClient(auth=provider, verify=verify, timeout=30)
    async with Client(streamable_http_client(mcp_url, http_client=http), cache=None) as client:
        listed = await ok(client, "list_projects", {})
        check([p["name"] for p in listed["projects"]] == ["demo"], "the CIMD client works", listed)
    check(storage.client.client_id == GOOD, "the client id is the document's URL", storage.client)
    check(storage.tokens.access_token.startswith("slr_"), "a remote token", storage.tokens)
    check(any(h[2] == "/good.json" and h[1] == HOST for h in hits), "the document was fetched", hits)

    # ----- 2. Every way to make Sluice fetch from here, or take a document it should not ------
    raw = httpx2.AsyncClient(verify=verify, timeout=30)
    _, challenge = rc.pkce()

    async def refused_with(client_id, phrase, redirect=REDIRECT):
        q = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect,
             "state": "s", "code_challenge": challenge, "code_challenge_method": "S256",
             "resource": mcp_url}
        r = await raw.get(f"{base}/oauth/authorize?{urlencode(q)}")
        check(r.status_code == 400 and phrase in r.text, f"{client_id} refused: {phrase}", (r.status_code, r.text))

    for client_id, phrase in [
        ("https://inside.sluice.test/good.json", "private, local or reserved"),
        ("https://localhost/good.json", "not a full domain name"),
        ("https://127.0.0.1/good.json", "an address, not a name"),
        ("https://[::1]/good.json", "an address, not a name"),
        ("https://2130706433/good.json", "normal form"),
        ("https://client.sluice.test/a/../good.json", "normal form"),
        ("https://CLIENT.sluice.test/good.json", "normal form"),
        ("https://client.sluice.test:443/good.json", "normal form"),
        ("https://client.sluice.test:8443/good.json", "default https port"),
        ("https://user@client.sluice.test/good.json", "user name or password"),
        ("https://nowhere.sluice.test/good.json", "does not resolve"),
        ("https://wrong.sluice.test/good.json", "did not prove who it is"),
        (url("/moved.json"), "redirects are not followed"),
        (url("/missing.json"), "answered 404"),
        (url("/big.json"), "larger than 5 KiB"),
        (url("/other.json"), "not the URL it was fetched from"),
        (url("/twice.json"), "duplicate field"),
        (url("/secret.json"), "only public clients"),
        (url("/foreign.json"), "none of the client&#39;s redirect URIs"),
        (url("/html.json"), "application/json"),
        (url("/markup.json"), "&lt;meta http-equiv=refresh"),
        (url("/" + "a" * 600 + ".json"), "longer than 512 bytes"),
    ]:
        await refused_with(client_id, phrase)
    key = quote(MARKUP, safe="")
    r = await raw.get(f"{base}/oauth/authorize?{key}=1&{key}=2")
    check(r.status_code == 400 and "<meta http-equiv=refresh content=" not in r.text.split("</head>")[1],
          "a parameter's name is quoted as text", r.text)
    started = time.monotonic()
    await refused_with(url("/slow.json"), "within 5 seconds")
    check(time.monotonic() - started < 7.5, "a slow document is given up on", time.monotonic() - started)
    await refused_with("http://client.sluice.test/good.json", "not registered")
    # The document lists a callback Sluice does not accept: that one is never usable.
    await refused_with(GOOD, "not one this client registered", redirect="https://evil.example/cb")

    check(not any(h[0] == "127.0.0.1" for h in hits), "nothing was ever fetched from loopback", hits)
    fetched = sorted({h[2] for h in hits})
    check("/moved.json" in fetched and "/twice.json" in fetched, "the documents were fetched", fetched)
    listed = rc.sluice("reach", "requests")
    check("slrq_" not in listed, "no refused client left a request for the person", listed)
    print(f"OK {common.checks}")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    if sys.argv[1:2] == ["certs"]:
        common.certs(sys.argv[2], HOST)
    else:
        asyncio.run(main())
