"""What the client-driving scripts share: a check that fails loudly (and exits at once — inside
the SDK's task groups an exception can wait forever on cleanup) and a record of every response,
so the scripts can assert at the end that no canary ever came back."""

import asyncio
import json
import os
import sys

checks = 0
seen = []


def check(cond, what, got=None):
    global checks
    checks += 1
    if not cond:
        print(f"FAILED: {what}\n  got: {got!r}"[:4000], file=sys.stderr, flush=True)
        os._exit(1)


def remember(structured, content=()):
    """Records a response's text for the final canary check."""
    seen.append(json.dumps(structured) + " ".join(getattr(c, "text", "") for c in content))


def no_canary_anywhere():
    canary = os.environ["SLUICE_CANARY"]
    for text in seen:
        check(canary not in text, "no canary in any response", text)
    return checks


async def call(client, tool, args, meta=None):
    """Calls a tool and records the response for the canary check."""
    if meta:
        res = await client.call_tool(tool, args, meta=meta)
    else:
        res = await client.call_tool(tool, args)
    remember(res.structured_content, res.content)
    info = (res.meta or {}).get("io.modelcontextprotocol/serverInfo") or {}
    check(info.get("name") == "sluice", f"{tool}: the result names the server in _meta", res.meta)
    return res


async def ok(client, tool, args):
    res = await call(client, tool, args)
    check(not res.is_error, f"{tool}({args}) succeeds", res.structured_content or res.content)
    return res.structured_content


async def refused(client, tool, args, codes):
    """Checks the call is refused with `codes` (one code, or a collection of acceptable ones);
    returns the structured error (`code`, `message`)."""
    codes = {codes} if isinstance(codes, str) else set(codes)
    res = await call(client, tool, args)
    check(res.is_error, f"{tool}({args}) is refused", res.structured_content)
    out = res.structured_content or {}
    check(out.get("code") in codes, f"{tool}({args}) refused with one of {sorted(codes)}", out)
    return out


async def sluice(binary, *args):
    """Runs the real `sluice` CLI (the human's side); returns (exit code, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(
        binary, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "SLUICE_SECRET_STORE": "file"})
    out, err = await proc.communicate()
    return proc.returncode, out.decode(), err.decode()
