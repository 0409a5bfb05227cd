"""What the client-driving scripts share: a check that fails loudly (and exits at once — inside
the SDK's task groups an exception can wait forever on cleanup) and a record of every response,
so the scripts can assert at the end that no canary ever came back."""

import asyncio
import datetime
import json
import os
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

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



async def approving(binary, task, tool=None, shown=None):
    """Approves, as the user would with the CLI, every approval of `tool` (any tool if None)
    that waits while `task` runs; checks that `sluice approvals show` says `shown` if given.
    Returns the task's result and the approvals it approved."""
    approved = []
    while not task.done():
        code, out, err = await sluice(binary, "approvals", "list", "--json")
        check(code == 0, "approvals list works", err)
        for a in json.loads(out):
            if a["state"] != "pending" or tool not in (None, a["tool"]):
                continue
            if shown is not None:
                code, text, err = await sluice(binary, "approvals", "show", a["id"])
                check(code == 0 and shown in text, f"approvals show says {shown!r}", text + err)
            code, _, err = await sluice(binary, "approvals", "approve", a["id"])
            check(code == 0, "approvals approve works", err)
            approved.append(a)
        await asyncio.wait({task}, timeout=0.1)
    return task.result(), approved

def certs(folder, host):
    """Writes a test CA (ca.pem) and a certificate it signs for `host` (leaf.pem, leaf.key) to
    `folder`: Sluice is started with the CA as SSL_CERT_FILE, and the script serves `host` with
    the leaf (rustls refuses a CA as a server's own certificate)."""
    os.makedirs(folder, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)

    def build(subject, issuer, key, signer, ca):
        b = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(issuer)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            b = b.add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        return b.sign(signer, hashes.SHA256())

    def write(name, data):
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Sluice test CA")])
    ca = build(ca_name, ca_name, ca_key, ca_key, True)
    key = ec.generate_private_key(ec.SECP256R1())
    leaf_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    leaf = build(leaf_name, ca_name, key, ca_key, False)
    write("ca.pem", ca.public_bytes(serialization.Encoding.PEM))
    write("leaf.pem", leaf.public_bytes(serialization.Encoding.PEM))
    write("leaf.key", key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
