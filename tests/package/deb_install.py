"""The .deb, installed for real: `apt-get install ./sluice.deb` (so the declared dependencies
resolve), the installed app started under Xvfb, the installed `sluice` CLI creating a project and
a token in a temporary data folder, the official Python MCP SDK (written by others) calling
list_projects on the installed app's MCP endpoint with that token — over HTTP and through the
installed `sluice stdio` (the sidecar) — a second launch that hands over to the running app
(single instance, on a private session bus), then `dpkg --purge` and a check that every file and
folder the package brought is gone.

It changes the system (installs and purges a package), so it runs only when a package was built:
the Rust test `package::deb_installs_runs_and_purges` (crates/xtask/tests/it) calls it, and
`cargo xtask bundle --test` runs that test on the package it just built. Needs root (or
password-less sudo), Xvfb, dbus-daemon, and this Python with the `mcp` package.

Usage: python deb_install.py PATH.deb. Exits non-zero on the first failed check.
"""

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

# What the package must install: the app, and the CLI beside it (the app writes stdio client
# configs pointing at the `sluice` next to its own executable).
APP = "/usr/bin/sluice-app"
CLI = "/usr/bin/sluice"
STARTUP = 60.0


def fail(what, got=None):
    print(f"FAILED: {what}\n  got: {got!r}"[:4000], file=sys.stderr, flush=True)
    sys.exit(1)


def log(msg):
    print(f"[deb] {msg}", flush=True)


def root_cmd(args):
    return args if os.geteuid() == 0 else ["sudo", "-n", *args]


def run(args, **kw):
    res = subprocess.run(args, capture_output=True, text=True, **kw)
    if res.returncode != 0:
        fail(f"{' '.join(args)} succeeds", res.stdout[-2000:] + res.stderr[-2000:])
    return res.stdout


def installed(pkg):
    res = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
    return "install ok installed" in res.stdout


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def package_paths(deb):
    """Every path the archive holds, absolute (`./usr/bin/x` -> `/usr/bin/x`)."""
    listing = run(["dpkg-deb", "-c", deb])
    paths = []
    for line in listing.splitlines():
        name = line.split(None, 5)[5].split(" -> ")[0]
        path = "/" + name.lstrip("./").rstrip("/")
        if path != "/":
            paths.append(path)
    return paths


def start_xvfb():
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    line = xvfb.stdout.readline().decode().strip()
    if not line.isdigit():
        fail("Xvfb reports its display", line)
    return xvfb, f":{line}"


def stop(proc):
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)


async def list_projects(server):
    async with Client(server, cache=None) as client:
        res = await client.call_tool("list_projects", {})
        if res.is_error:
            fail("list_projects succeeds", res.structured_content)
        return [p["name"] for p in res.structured_content["projects"]]


def wait_for_port(port, app, deadline):
    while True:
        if app.poll() is not None:
            fail("the installed app keeps running", app.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                fail(f"the installed app serves MCP on port {port} within {STARTUP} s")
            time.sleep(0.25)


def start_session_bus(tmp):
    """A private D-Bus session bus: single-instance finds the running app through it."""
    bus = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--print-address=1",
         f"--address=unix:path={os.path.join(tmp, 'bus')}"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    address = bus.stdout.readline().decode().strip()
    if not address.startswith("unix:"):
        fail("dbus-daemon reports its address", address)
    return bus, address


def second_instance_exits(app_env, first):
    """A second launch hands over to the running app and exits at once (single instance)."""
    second = subprocess.run([APP], env=app_env, capture_output=True, text=True, timeout=30)
    if second.returncode != 0:
        fail("a second launch exits cleanly (single instance)", second.stderr[-2000:])
    if first.poll() is not None:
        fail("the first instance keeps running after a second launch", first.returncode)


def exercise(tmp):
    """The installed app and CLI, in a private home and data folder."""
    home, data, project = (os.path.join(tmp, d) for d in ("home", "data", "project"))
    for d in (home, project):
        os.makedirs(d)
    with open(os.path.join(project, "README.md"), "w") as f:
        f.write("installed from a package\n")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": home,
        "SLUICE_DATA_DIR": data,
        "SLUICE_SECRET_STORE": "file",
        "LANG": "C.UTF-8",
    }
    run([CLI, "project", "add", project, "--name", "pkgtest"], env=env)
    out = run([CLI, "token", "create", "--label", "package test"], env=env)
    tokens = [w for w in out.split() if w.startswith("slc_")]
    if not tokens:
        fail("the installed sluice prints a new token", out[:500])
    token = tokens[0]

    xvfb, display = start_xvfb()
    bus, bus_address = start_session_bus(tmp)
    app = None
    try:
        port = free_port()
        app_env = dict(
            env,
            DISPLAY=display,
            SLUICE_PORT=str(port),
            WEBKIT_DISABLE_COMPOSITING_MODE="1",
            NO_AT_BRIDGE="1",
            DBUS_SESSION_BUS_ADDRESS=bus_address,
        )
        app_log = open(os.path.join(tmp, "app.log"), "w")
        app = subprocess.Popen([APP], env=app_env, stdout=app_log, stderr=subprocess.STDOUT,
                               start_new_session=True)
        wait_for_port(port, app, time.monotonic() + STARTUP)
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        names = asyncio.run(list_projects(
            streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)))
        if names != ["pkgtest"]:
            fail("the installed app lists the project the installed CLI authorized", names)
        log(f"MCP list_projects over HTTP on port {port}: {names}")
        # A stdio client (Claude Desktop's form) runs the installed CLI, which forwards to the
        # installed app: the sidecar works after a plain install.
        stdio = StdioServerParameters(command=CLI, args=["stdio"],
                                      env=dict(env, SLUICE_TOKEN=token))
        names = asyncio.run(list_projects(stdio))
        if names != ["pkgtest"]:
            fail("list_projects through the installed `sluice stdio`", names)
        log(f"MCP list_projects through {CLI} stdio: {names}")
        second_instance_exits(app_env, app)
        names = asyncio.run(list_projects(streamable_http_client(
            f"http://127.0.0.1:{port}/mcp",
            http_client=httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}))))
        if names != ["pkgtest"]:
            fail("the first instance still serves after a second launch", names)
        log("a second launch handed over to the running app and exited (single instance)")
        if app.poll() is not None:
            fail("the installed app is still running after the client's calls", app.returncode)
    finally:
        stop(app)
        stop(bus)
        stop(xvfb)


def main():
    if len(sys.argv) != 2:
        fail("usage: deb_install.py PATH.deb")
    deb = os.path.abspath(sys.argv[1])
    pkg = run(["dpkg-deb", "-f", deb, "Package"]).strip()
    if installed(pkg):
        fail(f"package {pkg} is not installed before the test (a real install would be purged)")
    contents = package_paths(deb)
    existed = {p for p in contents if os.path.lexists(p)}
    for must in (APP, CLI):
        if must not in contents:
            fail(f"the package contains {must}", contents)

    started = time.monotonic()
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    run(root_cmd(["apt-get", "-o", "DPkg::Lock::Timeout=300", "install", "-y", "-qq",
                  "--no-install-recommends", deb]), env=env)
    log(f"installed {pkg} in {time.monotonic() - started:.0f} s")
    try:
        listed = [p for p in run(["dpkg", "-L", pkg]).splitlines() if p.strip() and p != "/."]
        for must in (APP, CLI):
            if must not in listed or not os.access(must, os.X_OK):
                fail(f"dpkg -L {pkg} lists an executable {must}", listed)
        tmp = tempfile.mkdtemp(prefix="sluice-deb-")
        try:
            exercise(tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        run(root_cmd(["dpkg", "--purge", pkg]), env=env)
    if installed(pkg):
        fail(f"{pkg} is gone after dpkg --purge")
    left = [p for p in set(listed) | set(contents) if p not in existed and os.path.lexists(p)]
    if left:
        fail("nothing the package installed is left after the purge", sorted(left))
    log(f"purged {pkg}: none of its {len(listed)} paths is left")
    print("OK", flush=True)


if __name__ == "__main__":
    main()
