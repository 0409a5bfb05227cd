"""The .deb, installed for real: `apt-get install ./sluice.deb` (so the declared dependencies
resolve), its AppArmor profile shipped (and put in place where AppArmor 4 is), the installed
app started under Xvfb, the installed `sluice` CLI creating a project and
a token in a temporary data folder, the official Python MCP SDK (written by others) calling
list_projects on the installed app's MCP endpoint with that token — over HTTP and through the
installed `sluice stdio` (the sidecar) — a second launch that hands over to the running app
(single instance, on a private session bus); then "Start at login": the installed app driven
through tauri-driver over plain W3C WebDriver (its window drawing the Projects view, then
Settings, the start-at-login box ticked) writes a
login item in the private home that starts the installed app with `--hidden`, and that login
item's own command, run as a session start would, serves MCP from the tray without opening the
window (no WebKit web process below it); then `dpkg --purge` and a check that every file and
folder the package brought is gone.

It changes the system (installs and purges a package), so it runs only when a package was built:
the Rust test `package::deb_installs_runs_and_purges` (crates/xtask/tests/it) calls it, and
`cargo xtask bundle --test` runs that test on the package it just built. Needs root (or
password-less sudo), Xvfb, dbus-daemon, WebKitWebDriver (webkit2gtk-driver), tauri-driver
(`SLUICE_TAURI_DRIVER`, else on PATH or in Cargo's bin folder; `cargo xtask test` installs it),
and this Python with the `mcp` package.

Usage: python deb_install.py PATH.deb. Exits non-zero on the first failed check.
"""

import asyncio
import configparser
import contextlib
import os
import shlex
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
# The argument the login item passes: a start at login goes to the tray, without the window.
HIDDEN = "--hidden"
# How long one WebDriver step may take, and the pause between two polls.
STEP = 30.0
POLL = 0.2
# How long the app started at login is watched for a window's web process once MCP is up.
WATCH = 5.0
# The AppArmor profile the package ships, and where its post-install script puts it when the
# system has AppArmor 4 (Ubuntu 24.04+ needs it for the jobs' user namespaces).
APPARMOR_SHIPPED = "/usr/share/sluice/apparmor/sluice"
APPARMOR_ACTIVE = "/etc/apparmor.d/sluice"
APPARMOR_4 = "/etc/apparmor.d/abi/4.0"
# How W3C WebDriver names an element in its answers.
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


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


def list_over_http(port, token):
    """list_projects on the app's MCP endpoint, with the token as a Bearer."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    return asyncio.run(list_projects(
        streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)))


def second_instance_exits(app_env, first):
    """A second launch hands over to the running app and exits at once (single instance)."""
    second = subprocess.run([APP], env=app_env, capture_output=True, text=True, timeout=30)
    if second.returncode != 0:
        fail("a second launch exits cleanly (single instance)", second.stderr[-2000:])
    if first.poll() is not None:
        fail("the first instance keeps running after a second launch", first.returncode)


@contextlib.contextmanager
def serving(tmp, app_env, argv, name, token, what):
    """Runs `argv` (the installed app) on a free port until it lists the project over MCP (else
    fails with `what`); yields (process, env, port, log path). Stops it after, and checks that
    its port is closed (the next step starts the app again on the same bus)."""
    port = free_port()
    env = dict(app_env, SLUICE_PORT=str(port))
    log_path = os.path.join(tmp, f"{name}.log")
    with open(log_path, "w") as out:
        app = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        wait_for_port(port, app, time.monotonic() + STARTUP)
        names = list_over_http(port, token)
        if names != ["pkgtest"]:
            fail(what, names)
        yield app, env, port, log_path
    finally:
        stop(app)
    port_closed(port)


def serves_mcp(tmp, env, app_env, token):
    """The installed app answers MCP over HTTP and through the sidecar; a second launch hands
    over to it."""
    with serving(tmp, app_env, [APP], "app", token,
                 "the installed app lists the project the installed CLI authorized"
                 ) as (app, app_env, port, _):
        log(f"MCP list_projects over HTTP on port {port}: ['pkgtest']")
        # A stdio client (Claude Desktop's form) runs the installed CLI, which forwards to the
        # installed app: the sidecar works after a plain install.
        stdio = StdioServerParameters(command=CLI, args=["stdio"],
                                      env=dict(env, SLUICE_TOKEN=token))
        names = asyncio.run(list_projects(stdio))
        if names != ["pkgtest"]:
            fail("list_projects through the installed `sluice stdio`", names)
        log(f"MCP list_projects through {CLI} stdio: {names}")
        second_instance_exits(app_env, app)
        names = list_over_http(port, token)
        if names != ["pkgtest"]:
            fail("the first instance still serves after a second launch", names)
        log("a second launch handed over to the running app and exited (single instance)")
        if app.poll() is not None:
            fail("the installed app is still running after the client's calls", app.returncode)


def port_closed(port):
    """Nothing serves on `port` any more (the app that did has stopped)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return
        if time.monotonic() > deadline:
            fail(f"the app stopped serving on port {port}", "the port still accepts connections")
        time.sleep(POLL)


# Processes, read from /proc.

def processes():
    """pid -> (ppid, session id, comm, argv, exe) of every live process (zombies left out)."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
            with open(f"/proc/{name}/cmdline", "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        except OSError:
            continue
        try:
            exe = os.readlink(f"/proc/{name}/exe")
        except OSError:
            exe = ""
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        state, ppid, _pgrp, sid = stat[stat.rindex(")") + 2:].split()[:4]
        if state != "Z":
            table[int(name)] = (int(ppid), int(sid), comm, argv, exe)
    return table


def below(pid, table):
    """The processes below `pid`: its descendants, and whatever runs in the session it leads
    (a double-forked helper is reparented but stays in its session)."""
    children = {}
    for child, row in table.items():
        children.setdefault(row[0], []).append(child)
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found | {p for p, row in table.items() if row[1] == pid and p != pid}


def web_processes(pid):
    """WebKit's web processes below `pid` (the window's content runs in one), described."""
    table = processes()
    web = [p for p in below(pid, table)
           if "WebKitWebProces" in table[p][2] or "WebKitWebProcess" in " ".join(table[p][3])]
    return sorted(f"{p} {' '.join(table[p][3])}" for p in web)


def apps_below(pid):
    """The installed app's processes below `pid`."""
    table = processes()
    return sorted(p for p in below(pid, table) if APP in (table[p][4], (table[p][3] or [""])[0]))


def end(pids):
    """Makes sure these processes are gone: SIGTERM, then SIGKILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        live = [p for p in pids if p in processes()]
        for p in live:
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while live and time.monotonic() < deadline:
            time.sleep(POLL)
            live = [p for p in live if p in processes()]
        if not live:
            return
    fail("the app's processes are gone after SIGKILL", live)


# W3C WebDriver over plain HTTP (tauri-driver in front of WebKitWebDriver, which runs the app).

def tauri_driver():
    """tauri-driver: SLUICE_TAURI_DRIVER, else Cargo's bin folder, else PATH (as xtask finds it)."""
    if os.environ.get("SLUICE_TAURI_DRIVER"):
        return os.environ["SLUICE_TAURI_DRIVER"]
    cargo = os.environ.get("CARGO_HOME") or os.path.join(os.path.expanduser("~"), ".cargo")
    found = os.path.join(cargo, "bin", "tauri-driver")
    if os.path.isfile(found):
        return found
    found = shutil.which("tauri-driver")
    if not found:
        fail("tauri-driver is installed (`cargo xtask test` installs it)",
             "not in SLUICE_TAURI_DRIVER, Cargo's bin folder or PATH")
    return found


def webdriver(method, url, body=None, timeout=STEP):
    """One WebDriver command: (True, value), or (False, what went wrong). tauri-driver resets
    a request now and then: that is an answer too, and the callers poll."""
    try:
        res = httpx2.request(method, url, json=body, timeout=timeout)
        value = res.json().get("value")
    except (httpx2.TransportError, ValueError) as e:
        return False, repr(e)
    return res.status_code == 200, value


def start_driver(tmp, app_env):
    """tauri-driver on a free port, listening; its log goes to driver.log."""
    port, native = free_port(), free_port()
    driver_log = open(os.path.join(tmp, "driver.log"), "w")
    driver = subprocess.Popen(
        [tauri_driver(), "--port", str(port), "--native-port", str(native)],
        env=app_env, stdout=driver_log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    deadline = time.monotonic() + STEP
    while True:
        if driver.poll() is not None:
            fail("tauri-driver keeps running", read_tail(os.path.join(tmp, "driver.log")))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return driver, f"http://127.0.0.1:{port}"
        except OSError:
            if time.monotonic() > deadline:
                fail(f"tauri-driver listens on port {port} within {STEP} s")
            time.sleep(POLL)


def read_tail(path):
    with open(path, errors="replace") as f:
        return f.read()[-3000:]


def new_session(tmp, base):
    """A WebDriver session: WebKitWebDriver starts the installed app. Sent once (a session that
    did start would leave an app behind); returns the session's URL."""
    caps = {"browserName": "wry", "tauri:options": {"application": APP}}
    ok, value = webdriver("POST", f"{base}/session", {"capabilities": {"alwaysMatch": caps}},
                          timeout=STARTUP)
    if not ok or not isinstance(value, dict) or "sessionId" not in value:
        fail("tauri-driver starts the installed app in a WebDriver session",
             (value, read_tail(os.path.join(tmp, "driver.log"))))
    return f"{base}/session/{value['sessionId']}"


def usable(session, using, selector):
    """Polls until the element is shown and enabled; returns its URL."""
    deadline = time.monotonic() + STEP
    last = None
    while True:
        ok, found = webdriver("POST", f"{session}/element", {"using": using, "value": selector})
        if ok:
            element = f"{session}/element/{found[ELEMENT]}"
            last = (webdriver("GET", f"{element}/displayed"),
                    webdriver("GET", f"{element}/enabled"))
            if last == ((True, True), (True, True)):
                return element
        else:
            last = found
        if time.monotonic() > deadline:
            fail(f"a shown and enabled {selector!r} in the window within {STEP} s", last)
        time.sleep(POLL)


def draws_view(session, view):
    """Polls until the page has drawn `view` with the app's state loaded (`main[data-view]`,
    which only Sluice's own script sets): an error page such as "asset not found" fails here,
    with the text it shows."""
    deadline = time.monotonic() + STEP
    selector = f"main[data-view={view}]"
    while True:
        ok, _ = webdriver("POST", f"{session}/element", {"using": "css selector", "value": selector})
        if ok:
            return
        if time.monotonic() > deadline:
            shown = None
            found, body = webdriver("POST", f"{session}/element",
                                    {"using": "tag name", "value": "body"})
            if found:
                shown = webdriver("GET", f"{session}/element/{body[ELEMENT]}/text")
            fail(f"the installed app's window draws the {view} view within {STEP} s", shown)
        time.sleep(POLL)


def click(session, using, selector):
    """Clicks a control once it is usable, again if the request was reset (for a control that
    clicking twice does not undo)."""
    deadline = time.monotonic() + STEP
    while True:
        ok, value = webdriver("POST", f"{usable(session, using, selector)}/click", {})
        if ok:
            return
        if time.monotonic() > deadline:
            fail(f"a click on {selector!r} lands", value)
        time.sleep(POLL)


def login_items(autostart):
    """The login items (XDG autostart .desktop files) in `autostart`."""
    try:
        names = sorted(os.listdir(autostart))
    except FileNotFoundError:
        return []
    return [os.path.join(autostart, n) for n in names if n.endswith(".desktop")]


def wait_for_login_item(autostart, seconds):
    deadline = time.monotonic() + seconds
    while not login_items(autostart) and time.monotonic() < deadline:
        time.sleep(POLL)
    return login_items(autostart)


def tick_start_at_login(session, autostart):
    """Ticks Settings > "Start Sluice when I log in" once (a second click would untick it: after
    a reset request, the login item tells whether the click landed). Returns the login item."""
    box = "input[name=start-at-login]"
    deadline = time.monotonic() + STEP
    while True:
        ok, value = webdriver("POST", f"{usable(session, 'css selector', box)}/click", {})
        items = wait_for_login_item(autostart, STEP if ok else 3)
        if len(items) == 1:
            return items[0]
        if items or ok or time.monotonic() > deadline:
            fail(f"ticking {box} writes one login item in {autostart}", (items, value))


def shows_ticked(session):
    """Polls until the start-at-login box shows ticked (it reads the login item back)."""
    box = "input[name=start-at-login]"
    deadline = time.monotonic() + STEP
    while True:
        ok, checked = webdriver("GET", f"{usable(session, 'css selector', box)}/property/checked")
        if ok and checked is True:
            return
        if time.monotonic() > deadline:
            fail(f"{box} shows ticked once the login item is written", (ok, checked))
        time.sleep(POLL)


def login_command(item):
    """The login item's command, checked: it starts the installed app, hidden."""
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    try:
        entry.read(item)
        exec_line = entry["Desktop Entry"]["Exec"]
    except (configparser.Error, KeyError) as e:
        fail(f"{item} is a desktop entry with an Exec line", (repr(e), open(item).read()))
    if entry["Desktop Entry"].get("Type") != "Application":
        fail(f"{item} is of Type=Application", dict(entry["Desktop Entry"]))
    argv = shlex.split(exec_line)
    if argv[:1] != [APP] or HIDDEN not in argv[1:]:
        fail(f"the login item starts {APP} with {HIDDEN}", exec_line)
    log(f"login item {item}: Exec={exec_line}")
    return argv


def enable_start_at_login(tmp, app_env, home):
    """The installed app, driven over WebDriver: Settings > Start at login writes a login item
    in the private home. The app is stopped at the end. Returns the login item's path."""
    port = free_port()
    driver, base = start_driver(tmp, dict(app_env, SLUICE_PORT=str(port)))
    apps = []
    try:
        session = new_session(tmp, base)
        apps = apps_below(driver.pid)
        if len(apps) != 1:
            fail(f"the WebDriver session runs one {APP}", apps)
        draws_view(session, "projects")
        log("the installed app's window draws the Projects view")
        click(session, "xpath", "//nav//button[normalize-space()='Settings']")
        draws_view(session, "settings")
        item = tick_start_at_login(session, os.path.join(home, ".config", "autostart"))
        shows_ticked(session)
        # The same look for WebKit's web process that the start at login is checked with finds
        # the open window's.
        web = web_processes(apps[0])
        if not web:
            fail(f"a WebKit web process runs below the app with its window open (pid {apps[0]})",
                 processes().get(apps[0]))
        log(f"Settings > Start at login ticked over WebDriver; the window's web process runs "
            f"below the app: {web[0]}")
        webdriver("DELETE", session)
    finally:
        stop(driver)
        apps += apps_below(driver.pid)
        end(apps)
    port_closed(port)
    log(f"WebDriver session ended; the app (pid {', '.join(map(str, apps))}) is stopped")
    return item


def starts_hidden_at_login(tmp, app_env, argv, token):
    """The login item's command, as the session starts it: MCP answers, and no window opens
    (no WebKit web process below the app) while it runs."""
    with serving(tmp, app_env, argv, "login", token,
                 "the app started at login lists the project") as (app, _, port, log_path):
        log(f"started at login ({shlex.join(argv)}): MCP list_projects on port {port}: "
            "['pkgtest']")
        watched = time.monotonic() + WATCH
        while time.monotonic() < watched:
            web = web_processes(app.pid)
            if web:
                fail(f"no window (no WebKit web process) below the app started with {HIDDEN}", web)
            if app.poll() is not None:
                fail("the app started at login keeps running", read_tail(log_path))
            time.sleep(POLL)
        log(f"no WebKit web process below it for {WATCH:.0f} s: tray only, no window")


def apparmor_profile():
    """The profile is shipped for the app and CLI, with the one rule it exists for, and is in
    place (and parses) exactly where AppArmor 4 is installed. Returns whether it was put in
    place, so the purge can be checked to remove it."""
    try:
        text = open(APPARMOR_SHIPPED).read()
    except OSError as e:
        fail(f"the package ships its AppArmor profile at {APPARMOR_SHIPPED}", repr(e))
    rules = [line.strip() for line in text.splitlines()]
    if "userns," not in rules or not any(APP.rsplit("/", 1)[0] in r and "sluice-app" in r
                                         for r in rules if r.startswith("profile ")):
        fail("the AppArmor profile grants user namespaces to /usr/bin/sluice-app", text)
    if not os.path.exists(APPARMOR_4):
        if os.path.lexists(APPARMOR_ACTIVE):
            fail(f"no {APPARMOR_ACTIVE} without AppArmor 4 ({APPARMOR_4} is absent)")
        log("AppArmor 4 is not installed: the profile is shipped, not put in place")
        return False
    if open(APPARMOR_ACTIVE).read() != text:
        fail(f"the post-install script puts the profile at {APPARMOR_ACTIVE}")
    parser = shutil.which("apparmor_parser")
    if parser:
        run(root_cmd([parser, "-Q", "-T", "-K", APPARMOR_ACTIVE]))
    log(f"AppArmor 4: the profile is in place at {APPARMOR_ACTIVE}"
        + (" and parses" if parser else " (no apparmor_parser to parse it)"))
    return True


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
    try:
        app_env = dict(
            env,
            DISPLAY=display,
            WEBKIT_DISABLE_COMPOSITING_MODE="1",
            NO_AT_BRIDGE="1",
            DBUS_SESSION_BUS_ADDRESS=bus_address,
        )
        serves_mcp(tmp, env, app_env, token)
        item = enable_start_at_login(tmp, app_env, home)
        starts_hidden_at_login(tmp, app_env, login_command(item), token)
    finally:
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
    profile_active = False
    try:
        listed = [p for p in run(["dpkg", "-L", pkg]).splitlines() if p.strip() and p != "/."]
        profile_active = apparmor_profile()
        for must in (APP, CLI):
            if must not in listed or not os.access(must, os.X_OK):
                fail(f"dpkg -L {pkg} lists an executable {must}", listed)
        # The login item belongs in the test's private home only, not in this user's.
        own_autostart = os.path.join(os.path.expanduser("~"), ".config", "autostart")
        own_items = login_items(own_autostart)
        tmp = tempfile.mkdtemp(prefix="sluice-deb-")
        try:
            exercise(tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if login_items(own_autostart) != own_items:
            fail(f"no login item appears outside the private home ({own_autostart})",
                 login_items(own_autostart))
    finally:
        run(root_cmd(["dpkg", "--purge", pkg]), env=env)
    if installed(pkg):
        fail(f"{pkg} is gone after dpkg --purge")
    left = [p for p in set(listed) | set(contents) if p not in existed and os.path.lexists(p)]
    if profile_active:
        left += [APPARMOR_ACTIVE] if os.path.lexists(APPARMOR_ACTIVE) else []
    if left:
        fail("nothing the package installed is left after the purge", sorted(left))
    log(f"purged {pkg}: none of its {len(listed)} paths is left")
    print("OK", flush=True)


if __name__ == "__main__":
    main()
