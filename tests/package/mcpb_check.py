"""Claude Desktop's bundle (`.mcpb`), installed and run as a host would: the official MCPB CLI
(`@anthropic-ai/mcpb`) reads it back (`info`) and unpacks it; the manifest asks for the token as
a sensitive setting and carries none itself; the server is started exactly as the manifest tells
a host to — `${__dirname}` replaced by the unpacked folder, `${user_config.token}` by the token,
in the environment of that one process — and a real MCP client (the Python SDK, over stdio)
lists every tool and reads a file of a project through it, from a real engine (`sluice serve`
with a private data folder). Claude Desktop itself does not run on Linux; this is everything it
does with the bundle short of its window.

Usage: python mcpb_check.py --mcpb FILE --sluice BIN --node NODE --mcpb-cli CLI.
Exits non-zero on the first failed check.
"""

import argparse
import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import zipfile

from mcp import Client
from mcp.client.stdio import StdioServerParameters

# Every tool the server has: the golden `tools/list` the MCP crate's tests keep exact.
GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "crates",
                      "sluice-mcp", "tests", "tools-list.json")
with open(GOLDEN) as golden:
    EXPECTED_TOOLS = len(json.load(golden))


def fail(what, got=None):
    print(f"FAILED: {what}\n  got: {got!r}"[:4000], file=sys.stderr, flush=True)
    sys.exit(1)


def log(msg):
    print(f"[mcpb] {msg}", flush=True)


def run(args, **kw):
    res = subprocess.run(args, capture_output=True, text=True, **kw)
    if res.returncode != 0:
        fail(f"{' '.join(map(str, args))} succeeds", res.stdout[-2000:] + res.stderr[-2000:])
    return res.stdout


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def substitute(value, dirname, user_config):
    """What a host does to the manifest's strings before it starts the server."""
    value = value.replace("${__dirname}", dirname)
    return re.sub(r"\$\{user_config\.([A-Za-z0-9_]+)\}",
                  lambda m: user_config.get(m.group(1), ""), value)


async def use(server, project_file):
    async with Client(server, cache=None) as client:
        tools = await client.list_tools()
        names = sorted(t.name for t in tools.tools)
        if len(names) != EXPECTED_TOOLS:
            fail(f"the bundle's server lists {EXPECTED_TOOLS} tools", names)
        res = await client.call_tool("read_file", {"project": "bundled", "path": project_file})
        if res.is_error:
            fail("read_file through the bundle", res.structured_content)
        return names, res.structured_content["content"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mcpb", required=True)
    ap.add_argument("--sluice", required=True)
    ap.add_argument("--node", required=True)
    ap.add_argument("--mcpb-cli", required=True)
    args = ap.parse_args()

    info = run([args.node, args.mcpb_cli, "info", args.mcpb])
    log(f"mcpb info: {' '.join(info.split())[:200]}")
    with zipfile.ZipFile(args.mcpb) as z:
        manifest = json.loads(z.read("manifest.json"))
        names = z.namelist()
        blob = b"".join(z.read(n) for n in names if not n.startswith("server/"))
    if "server/sluice" not in names and "server/sluice.exe" not in names:
        fail("the bundle holds the sluice binary", names)
    if b"slc_" in blob:
        fail("the bundle's manifest carries no token", blob[:500])
    token_field = manifest["user_config"]["token"]
    if not (token_field["sensitive"] and token_field["required"]):
        fail("the token is a required, sensitive setting (kept in the OS keychain)", token_field)
    config = manifest["server"]["mcp_config"]
    if "${user_config.token}" not in json.dumps(config.get("env", {})):
        fail("the token reaches the server through its environment only", config)
    if "${user_config.token}" in json.dumps([config["command"], config.get("args", [])]):
        fail("the token is never on the command line", config)
    if len(manifest["tools"]) != EXPECTED_TOOLS:
        fail("the manifest lists every tool", manifest["tools"])

    with tempfile.TemporaryDirectory(prefix="sluice-mcpb-") as tmp:
        unpacked = os.path.join(tmp, "installed")
        run([args.node, args.mcpb_cli, "unpack", args.mcpb, unpacked])
        data, project = os.path.join(tmp, "data"), os.path.join(tmp, "project")
        os.makedirs(project)
        with open(os.path.join(project, "README.md"), "w") as f:
            f.write("read through the bundle\n")
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "SLUICE_DATA_DIR": data,
               "SLUICE_SECRET_STORE": "file", "LANG": "C.UTF-8"}
        run([args.sluice, "project", "add", project, "--name", "bundled"], env=env)
        # `full`: the check counts every tool the bundle's server can offer (a new token is
        # `review` unless chosen).
        out = run([args.sluice, "token", "create", "--label", "claude desktop bundle",
                   "--profile", "full"], env=env)
        token = next((w for w in out.split() if w.startswith("slc_")), None)
        if token is None:
            fail("sluice prints a new token", out[:500])
        port = free_port()
        serve = subprocess.Popen([args.sluice, "serve", "--port", str(port)], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 60
            while True:
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                if serve.poll() is not None or time.monotonic() > deadline:
                    fail("sluice serve listens", serve.stderr.read().decode()[-2000:])
                time.sleep(0.05)
            command = substitute(config["command"], unpacked, {"token": token})
            if not os.access(command, os.X_OK):
                fail("the unpacked server is executable (the archive kept its mode)", command)
            server_env = dict(env)
            for k, v in config.get("env", {}).items():
                server_env[k] = substitute(v, unpacked, {"token": token})
            server = StdioServerParameters(
                command=command,
                args=[substitute(a, unpacked, {"token": token}) for a in config.get("args", [])],
                env=server_env)
            tools, content = asyncio.run(use(server, "README.md"))
            if content != "read through the bundle\n":
                fail("read_file returns the project's file", content)
            log(f"the unpacked bundle served {len(tools)} tools and read README.md from a real engine")
            # Without the token (a host that lost its keychain entry), the bridge refuses.
            server_env["SLUICE_TOKEN"] = ""
            res = subprocess.run([command, "stdio"], env=server_env, input="",
                                 capture_output=True, text=True, timeout=30)
            if res.returncode == 0 or "SLUICE_TOKEN" not in res.stderr:
                fail("without a token the bundle's server says how to fix it", res.stderr[-500:])
        finally:
            serve.terminate()
            serve.wait(timeout=20)
    print("OK mcpb", flush=True)


main()
