"""OpenAI's Secure MCP Tunnel, end to end, with Sluice as the tunnel client. The test runs
`sluice serve` in a network and mount namespace of its own, where api.openai.com resolves to a
routable address on the loopback device and the test CA is the trust store; this script joins it.

`certs DIR` makes the test CA and a certificate for api.openai.com. `run` stands in for OpenAI's
tunnel service: the control plane Sluice long-polls on api.openai.com:443 (commands out, responses
back, following docs/protocol.md of openai/tunnel-client), and the connector-facing MCP endpoint
on 127.0.0.1, which queues each JSON-RPC message as a command and answers with what Sluice posts.
It checks the poll's headers, drives the endpoint with the official Python MCP SDK as ChatGPT's
connector ("No authentication"), then queues crafted commands directly: a connector's headers
(a garbage bearer, a foreign Origin and Host, a session id) that must not be applied, other
channels, notifications, session termination, expired and malformed deadlines, unknown command
types, malformed JSON-RPC, a response POST answered 503 (retried as it was) or 404 (never
retried); the audit log shows which calls ran. Last, the person revokes the tunnel's token and
the connector is refused. It asserts as it goes and prints `OK <checks>`."""

import argparse
import asyncio
import json
import os
import re
import secrets
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import common
from common import check, ok, refused

HOST = "api.openai.com"
SERVER_INFO = '{"version":1,"channels":[{"name":"main"}]}'
FINAL = {"jsonrpc_response", "notify_ack", "session_termination_response"}
RESP_TYPES = FINAL | {"jsonrpc_notify"}
# What OpenAI's service forwards from the connector's request; Sluice applies only MCP's own.
FORWARDED = ("Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "Authorization", "Mcp-Session-Id")
# What the connector endpoint passes back from a response's headers (besides its own type).
PASSED_BACK = {"mcp-protocol-version", "mcp-session-id", "www-authenticate"}
V = {"Mcp-Protocol-Version": ["2025-11-25"]}
HOSTILE = {"Authorization": ["Bearer slc_garbage"], "Origin": ["https://evil.example"],
           "Host": ["evil.example"], "Mcp-Session-Id": ["x"], "Cookie": ["session=stolen"],
           "X-Forwarded-For": ["10.0.0.1"]}
README = {"project": "demo", "path": "README.md"}
READ_TOOLS = {"list_projects", "read_file", "stat", "list_directory", "find_files", "search_text"}
UNSET = object()
SVC = None  # the service, shared by the HTTP handlers and the driver


def api_error(message, code):
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


def tool(name, arguments, id):
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


def never(tag):
    """A call that must never run. Sluice's `stat` serves nothing else here until the control
    call at the end, so the audit log shows whether any of these ran."""
    return tool("stat", {"project": "demo", "path": f"never-{tag}.txt"}, f"never-{tag}")


class Service:
    """OpenAI's side of one tunnel: the commands queued for it, and what Sluice posted back."""

    def __init__(self, tunnel, key):
        self.tunnel, self.key = tunnel, key
        self.cond = threading.Condition()  # an RLock: a caller can queue a batch while holding it
        self.queue = []       # commands no poll has taken yet
        self.commands = {}    # request_id -> command
        self.pending = set()  # request_ids without a terminal response
        self.done = {}        # request_id -> the terminal response's body
        self.posts = []       # every response POST: at, rid, kind, headers, raw, status
        self.polls = []       # every GET: path, headers
        self.faults = {}      # request_id -> [(status, headers)] for its next response POSTs
        self.problems = []    # protocol breaches the service answered 4xx

    def enqueue(self, jsonrpc=UNSET, command_type="jsonrpc", channel="main", headers=None,
                timeout=UNSET, faults=()):
        rid = "req_" + secrets.token_hex(12)
        cmd = {"request_id": rid, "shard_token": "shard_" + secrets.token_urlsafe(18),
               "command_type": command_type,
               "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "headers": headers or {}}
        if channel is not None:
            cmd["channel"] = channel
        if jsonrpc is not UNSET:
            cmd["jsonrpc"] = jsonrpc
        if timeout is not UNSET:
            cmd["response_timeout"] = timeout
        with self.cond:
            self.queue.append(cmd)
            self.commands[rid] = cmd
            self.pending.add(rid)
            self.faults[rid] = list(faults)
            self.cond.notify_all()
        return rid

    def take(self, limit, wait):
        with self.cond:
            self.cond.wait_for(lambda: self.queue, timeout=wait)
            batch, self.queue[:limit] = self.queue[:limit], []
            return batch

    def wait(self, rid, secs):
        with self.cond:
            self.cond.wait_for(lambda: rid in self.done or self.problems, timeout=secs)
            return self.done.get(rid)

    def respond(self, headers, raw):
        """A response POST: (status, body, extra headers)."""
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        body = body if isinstance(body, dict) else {}
        rid, kind = body.get("request_id"), body.get("resp_type") or "jsonrpc_response"
        post = {"at": time.monotonic(), "rid": rid, "kind": kind, "headers": headers, "raw": raw,
                "status": 200}
        with self.cond:
            self.posts.append(post)
            if self.faults.get(rid) and kind in FINAL:
                post["status"], extra = self.faults[rid].pop(0)
                post["injected"] = True
                return post["status"], api_error("injected", "tunnel_transport_unavailable"), extra
            if rid not in self.pending:
                post["status"] = 404
                return 404, api_error("no such pending request", "pending_request_not_found"), []
            cmd = self.commands[rid]
            breach = (
                "the shard token is not in X-Tunnel-Shard-Token"
                if headers.get("x-tunnel-shard-token") != cmd["shard_token"]
                else "a shard token in the body" if "shard_token" in body
                else "an unknown resp_type" if kind not in RESP_TYPES
                else "resp_code is not an integer" if type(body.get("resp_code")) is not int
                else None
            )
            if breach:
                self.problems.append((breach, headers, body))
                self.cond.notify_all()
                post["status"] = 400
                return 400, api_error(breach, "invalid_request"), []
            if kind in FINAL:  # jsonrpc_notify is not (and this stand-in does not stream it)
                self.done[rid] = body
                self.pending.discard(rid)
                self.cond.notify_all()
            return 200, {"status": "ok"}, []


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def body(self):
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def lower_headers(self):
        return {k.lower(): v for k, v in self.headers.items()}

    def reply(self, status, body=None, headers=()):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        if status != 204:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a):
        pass


class ControlPlane(Handler):
    """https://api.openai.com: the poll and response endpoints Sluice calls."""

    def tunnel_of(self, path, endpoint):
        """The tunnel a request to `endpoint` is for, or None once refused (answered)."""
        m = re.fullmatch(rf"/v1/tunnels/([^/]+)/{endpoint}", path)
        if not m:
            return self.reply(404, api_error("not found", "not_found"))
        if self.headers.get("Authorization") != f"Bearer {SVC.key}":
            SVC.problems.append(("a request without the tunnel's key", self.path))
            return self.reply(401, api_error("Incorrect API key provided.", "invalid_api_key"))
        if m[1] != SVC.tunnel:
            return self.reply(404, api_error("no such tunnel", "tunnel_not_found"))
        return m[1]

    def do_GET(self):
        url = urlsplit(self.path)
        SVC.polls.append({"path": self.path, "headers": self.lower_headers()})
        if self.tunnel_of(url.path, "poll") is None:
            return
        q = parse_qs(url.query)
        try:
            limit, wait = int(q.get("limit", ["25"])[0]), int(q.get("timeout_ms", ["15000"])[0])
        except ValueError:
            limit = wait = -1
        if not self.headers.get("X-Tunnel-Client-Name") or not 1 <= limit <= 25 or wait < 0:
            SVC.problems.append(("a poll the service refuses", self.path))
            return self.reply(400, api_error("bad poll", "invalid_request"))
        batch = SVC.take(limit, min(wait, 15000) / 1000)
        self.reply(200, {"commands": batch}) if batch else self.reply(204)

    def do_POST(self):
        raw = self.body()
        if self.tunnel_of(urlsplit(self.path).path, "response") is not None:
            self.reply(*SVC.respond(self.lower_headers(), raw))


class Connector(Handler):
    """/v1/mcp/{tunnel}: what ChatGPT's connector talks to; each message becomes a command."""

    def ours(self):
        if urlsplit(self.path).path == f"/v1/mcp/{SVC.tunnel}":
            return True
        self.reply(404, api_error("not found", "not_found"))
        return False

    def do_GET(self):  # POST only: no standalone SSE stream
        self.reply(405, headers=[("Allow", "POST")])

    def do_POST(self):
        raw = self.body()
        if not self.ours():
            return
        try:
            message = json.loads(raw)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            return self.reply(400, api_error("not a JSON object", "invalid_json_payload"))
        headers = {n: self.headers.get_all(n) for n in FORWARDED if self.headers.get_all(n)}
        answer = SVC.wait(SVC.enqueue(message, headers=headers), 60)
        if answer is None:
            return self.reply(502, api_error("the tunnel client did not answer", "timeout"))
        code = answer["resp_code"] if 200 <= answer["resp_code"] <= 599 else 502
        passed = [(k, v) for k, vs in (answer.get("resp_headers") or {}).items()
                  if k.lower() in PASSED_BACK for v in vs]
        if answer.get("resp_json") is None:
            return self.reply(202 if code < 300 else code, headers=passed)
        self.reply(code, answer["resp_json"], passed)


def serve(handler, address, tls=None):
    httpd = ThreadingHTTPServer(address, handler)
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(tls, "leaf.pem"), os.path.join(tls, "leaf.key"))
        httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


async def until(ready, secs, what):
    deadline = time.monotonic() + secs
    while not ready():
        check(time.monotonic() < deadline, what)
        await asyncio.sleep(0.05)


async def answered(rid, secs=30):
    """The command's terminal response (checked against the command), once Sluice posted it."""
    await until(lambda: rid in SVC.done or SVC.problems, secs, f"{SVC.commands[rid]} is answered")
    check(not SVC.problems, "Sluice's response POSTs follow the protocol", SVC.problems)
    r, cmd = SVC.done[rid], SVC.commands[rid]
    echoed = r.get("channel") in ([cmd["channel"]] if "channel" in cmd else [None, "main"])
    check(echoed, "the response echoes the command's channel", (cmd, r))
    names = {k.lower() for k in (r.get("resp_headers") or {})}
    check(names <= {"content-type", "mcp-protocol-version"},
          "only Content-Type and Mcp-Protocol-Version go back (no WWW-Authenticate)", r)
    return r


def result(r, id, code=200):
    """A JSON-RPC result for `id` that is not a tool error; returns it."""
    msg = r.get("resp_json") or {}
    check(r.get("resp_type", "jsonrpc_response") == "jsonrpc_response" and r["resp_code"] == code
          and msg.get("id") == id and "result" in msg, f"{id}: answered with a result", r)
    check(not msg["result"].get("isError"), f"{id}: not a tool error", msg)
    common.remember(msg)
    return msg["result"]


def error(r, id=UNSET, code=None):
    """A terminal JSON-RPC error response (for `id`, with HTTP status `code` when given)."""
    msg = r.get("resp_json") or {}
    check(r.get("resp_type", "jsonrpc_response") == "jsonrpc_response" and "error" in msg
          and (r["resp_code"] >= 400 if code is None else r["resp_code"] == code),
          "answered with a JSON-RPC error", r)
    check(id is UNSET or msg.get("id") == id, f"the error keeps the request's id {id!r}", r)


def ack(r, kind, code=None):
    check(r.get("resp_type") == kind and r.get("resp_json") is None
          and (200 <= r["resp_code"] < 300 if code is None else r["resp_code"] == code),
          f"a {kind} ({code or '2xx'}) without a payload", r)


async def audit(binary, after=-1):
    """The audit log's entries after sequence number `after`, newest first."""
    code, out, err = await common.sluice(binary, "audit", "list", "--json", "--limit", "1000")
    check(code == 0, "sluice audit list", err)
    return [e for e in map(json.loads, filter(str.strip, out.splitlines())) if e["seq"] > after]


async def connector_session(connector, http):
    """ChatGPT's connector as the official SDK: initialize, then the SDK's own negotiation."""
    async with Client(streamable_http_client(connector, http_client=http), mode="legacy",
                      cache=None) as client:
        check(client.server_info.name == "sluice", "the connector reaches Sluice", client.server_info)
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in READ_TOOLS:
            a = tools[name].annotations if name in tools else None
            check(a is not None and a.read_only_hint is True, f"{name} is marked read-only", a)
        check("write_file" in tools and tools["write_file"].annotations.read_only_hint is not True,
              "write_file is not marked read-only", tools.get("write_file"))
        listed = await ok(client, "list_projects", {})
        check([p["name"] for p in listed["projects"]] == ["demo"], "only the exposed project", listed)
        read = await ok(client, "read_file", README)
        check("hello" in json.dumps(read), "reads through the tunnel", read)
        await refused(client, "write_file", {"project": "demo", "path": "x.txt", "content": "x"},
                      {"read_only_project"})
    # A connector that probes `server/discover` first agrees the newest version: the service
    # forwards its Mcp-Method and Mcp-Name, which Sluice applies.
    async with Client(streamable_http_client(connector, http_client=http), cache=None) as client:
        check(client.protocol_version == "2026-07-28",
              "a probing connector agrees a version through the tunnel", client.protocol_version)
        await ok(client, "list_projects", {})


async def main():
    global SVC
    ap = argparse.ArgumentParser()
    ap.add_argument("--certs", required=True, help="the folder `certs` wrote")
    ap.add_argument("--address", required=True, help="api.openai.com's address in the namespace")
    ap.add_argument("--tunnel-id", required=True)
    ap.add_argument("--api-key", required=True)
    ap.add_argument("--sluice", required=True)
    args = ap.parse_args()
    tid = args.tunnel_id
    SVC = Service(tid, args.api_key)
    serve(ControlPlane, (args.address, 443), args.certs)
    connector = f"http://127.0.0.1:{serve(Connector, ('127.0.0.1', 0)).server_port}/v1/mcp/{tid}"
    _, version, _ = await common.sluice(args.sluice, "--version")
    version = version.split()[-1]
    start = max((e["seq"] for e in await audit(args.sluice)), default=-1)

    # ----- 1. Sluice long-polls the control plane, saying who it is -------------------------
    await until(lambda: SVC.polls, 20, "Sluice polls api.openai.com within 20 s")
    first = SVC.polls[0]
    url = urlsplit(first["path"])
    check(url.path == f"/v1/tunnels/{tid}/poll", "the poll's path", first)
    check(parse_qs(url.query) == {"limit": ["25"], "timeout_ms": ["15000"]}, "the poll's query", first)
    h = first["headers"]
    check(h.get("authorization") == f"Bearer {args.api_key}", "the poll carries the key", h)
    check(h.get("host", "").split(":")[0] == HOST, "to api.openai.com", h)
    check(h.get("x-tunnel-client-name") == "sluice", "X-Tunnel-Client-Name", h)
    check(h.get("x-tunnel-client-version") == version, "X-Tunnel-Client-Version", (h, version))
    check(h.get("x-tunnel-client-instance-id"), "X-Tunnel-Client-Instance-Id", h)
    check(h.get("x-tunnel-mcp-server-info") == SERVER_INFO, "X-Tunnel-MCP-Server-Info", h)

    # ----- 2. ChatGPT's connector, configured with no authentication, through the tunnel ------
    http = httpx2.AsyncClient(timeout=70)
    try:
        await connector_session(connector, http)
    except Exception as e:  # the SDK's own error says little; what the service saw says more
        check(False, "the connector's sessions through the tunnel", (e, SVC.problems))

    # ----- 3. Crafted commands, in one poll: the silent ones among the answered ones ----------
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    terminate = {"command_type": "session_termination", "headers": {"Mcp-Session-Id": ["s1"]}}
    with SVC.cond:
        silent = [
            SVC.enqueue(never("0s"), headers=V, timeout="0s"),
            SVC.enqueue(never("1ns"), headers=V, timeout="1ns"),
            SVC.enqueue(never("oauth"), command_type="oauth_discovery", headers=V),
            SVC.enqueue(command_type="future_thing", headers=V),
        ]
        hostile = SVC.enqueue(tool("read_file", README, "h1"), headers={**V, **HOSTILE})
        old = SVC.enqueue(tool("list_projects", {}, 2),
                          headers={"Mcp-Protocol-Version": ["1999-01-01"]})
        note = SVC.enqueue(notification, headers=V)
        ended = SVC.enqueue(**terminate)
        harpoon = SVC.enqueue(never("harpoon"), channel="harpoon", headers=V)
        harpoon_note = SVC.enqueue(notification, channel="harpoon", headers=V)
        harpoon_end = SVC.enqueue(channel="harpoon", **terminate)
        no_channel = SVC.enqueue(tool("list_projects", {}, 3), channel=None, headers=V)
        bad_member = SVC.enqueue({"jsonrpc": [1, 2], "id": 4, "method": "tools/list"}, headers=V)
        no_method = SVC.enqueue({"jsonrpc": "2.0", "id": 5, "params": {}}, headers=V)
        not_object = SVC.enqueue([1, 2], headers=V)
        # Valid and long, absent, or malformed (a lenient parser would read some as expired).
        timeouts = ["30s", None, "1.5s", 30, "1m30s", "-1s", " 0s", "0S", "0.0s"]
        deadlines = {t: SVC.enqueue(tool("list_projects", {}, 10 + i), headers=V, timeout=t)
                     for i, t in enumerate(timeouts)}

    read = result(await answered(hostile), "h1")
    check("hello" in json.dumps(read), "a connector's bearer, Origin, Host, session: not applied", read)
    error(await answered(old), 2, 400)  # the version header is applied: an unknown one is refused
    ack(await answered(note), "notify_ack")
    ack(await answered(ended), "session_termination_response", 204)
    error(await answered(harpoon), "never-harpoon", 400)
    ack(await answered(harpoon_note), "notify_ack", 400)
    ack(await answered(harpoon_end), "session_termination_response", 400)
    result(await answered(no_channel), 3)
    error(await answered(bad_member))
    error(await answered(no_method), 5)
    r = await answered(not_object)  # no id: an error, or an acknowledgment of the refusal
    check(r["resp_code"] >= 400 and r.get("resp_type") == "jsonrpc_response"
          and "error" in (r.get("resp_json") or {}), "[1, 2] answered with an error", r)
    for i, (t, rid) in enumerate(deadlines.items()):
        result(await answered(rid), 10 + i)  # no deadline, or not yet passed: answered
    await asyncio.sleep(2)
    for rid in silent:
        check(not [p for p in SVC.posts if p["rid"] == rid], "nothing posted for an expired or "
              "unknown command", SVC.commands[rid])

    # ----- 4. Response delivery: a 503 is retried as it was, a 404 never --------------------
    retried = SVC.enqueue(tool("list_projects", {}, 20), headers=V,
                          faults=[(503, [("Retry-After", "1")])])
    gone = SVC.enqueue(tool("list_projects", {}, 21), headers=V, faults=[(404, [])])
    result(await answered(retried), 20)
    posts = [p for p in SVC.posts if p["rid"] == retried and p["kind"] in FINAL]
    check(len(posts) == 2 and posts[0]["raw"] == posts[1]["raw"], "retried once, same body", posts)
    shards = {p["headers"].get("x-tunnel-shard-token") for p in posts}
    check(shards == {SVC.commands[retried]["shard_token"]}, "with the same shard token", shards)
    gap = posts[1]["at"] - posts[0]["at"]
    check(gap >= 0.9, "after Retry-After", gap)
    gone_posts = lambda: [p for p in SVC.posts if p["rid"] == gone and p["kind"] in FINAL]  # noqa
    await until(gone_posts, 20, "the response that gets a 404 is posted")
    await asyncio.sleep(3)
    check(len(gone_posts()) == 1, "a 404 is never retried", SVC.posts)

    # ----- 5. The audit log: none of the calls that must not run ran ------------------------
    result(await answered(SVC.enqueue(tool("stat", README, "control"), headers=V)), "control")
    deadline = time.monotonic() + 10
    stats = lambda entries: [e for e in entries if e["action"] == "stat"]  # noqa: E731
    while not stats(await audit(args.sluice, start)) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    await asyncio.sleep(1)
    entries = stats(await audit(args.sluice, start))
    check(len(entries) == 1, "only the control call ran (no expired, unknown, harpoon one)", entries)
    label = f"remote: OpenAI Secure MCP Tunnel {tid}"  # and a suffix that tells grants apart
    check(entries[0]["actor"].startswith(label), "it ran as the tunnel's own grant", entries)

    # ----- 6. The person revokes the tunnel's token: the connector is refused -----------------
    code, out, err = await common.sluice(args.sluice, "token", "list", "--json")
    check(code == 0, "sluice token list --json", err)
    tokens = json.loads(out)
    mine = [t for t in tokens if t["label"] == entries[0]["actor"] and not t.get("revoked_ms")]
    check(len(mine) == 1, "one live token for the tunnel", tokens)
    code, _, err = await common.sluice(args.sluice, "token", "revoke", mine[0]["id"])
    check(code == 0, "sluice token revoke", err)
    r = await http.post(connector, json=tool("list_projects", {}, "late"), headers={
        "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-11-25"})
    check(r.status_code == 401, "a revoked tunnel is refused", (r.status_code, r.text))

    # ----- 7. The person turns reach off mid-session: Sluice stops polling at once ------------
    code, _, err = await common.sluice(args.sluice, "reach", "off")
    check(code == 0, "sluice reach off", err)
    await asyncio.sleep(2)  # the engine follows the setting within half a second
    polled = len(SVC.polls)
    after = SVC.enqueue(tool("list_projects", {}, "after-off"), headers=V)
    await asyncio.sleep(4)
    check(len(SVC.polls) == polled, "no poll after reach is off", SVC.polls[polled:])
    check(not [p for p in SVC.posts if p["rid"] == after], "nothing answered after reach is off",
          SVC.posts[-1:])
    with SVC.cond:  # not a command Sluice left unanswered: it never took it
        SVC.pending.discard(after)

    # ----- Throughout: the protocol held, and no secret came back ---------------------------
    for poll in SVC.polls:
        said = {k: v for k, v in poll["headers"].items() if k.startswith("x-tunnel-")}
        check(said == {k: v for k, v in h.items() if k.startswith("x-tunnel-")},
              "every poll says the same (one instance id)", poll)
    for rid in list(SVC.done):
        await answered(rid, 0)
    injected = [p for p in SVC.posts if p.get("injected")]
    check(len(injected) == 2 and all(p["status"] == 200 for p in SVC.posts if not p.get("injected")),
          "one accepted response per command, no POST after a terminal one", SVC.posts)
    canary = os.environ["SLUICE_CANARY"]
    for p in SVC.posts:
        check(canary.encode() not in p["raw"], "no canary in any response Sluice posted", p["raw"])
    print(f"OK {common.no_canary_anywhere()}")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    if sys.argv[1:2] == ["certs"]:
        common.certs(sys.argv[2], HOST)
    else:
        if sys.argv[1:2] == ["run"]:
            del sys.argv[1]
        asyncio.run(main())
