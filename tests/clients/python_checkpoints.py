"""Checkpoints through the official Python MCP SDK over Streamable HTTP. A code generator run with
run_command (a Python script that rewrites, deletes, chmods and creates files and folders) gets a
checkpoint first; restoring it puts the tree back byte for byte, deletions and mode bits
included; a change made while the user looks at the restore's approval makes it refuse and change
nothing; the restore of the restore works; an auto-run path in a restore is named for consent and
a denial changes nothing; the shield's file (.env) is never stored nor touched; a manifest
tampered with in the state folder cannot make a restore write a shielded path; the user lists and
restores from the CLI without an approval. The human side is played through the real CLI.

Environment: SLUICE_TOKEN, SLUICE_CANARY. Arguments: --url, --sluice BIN, --dir (the project
"demo", read-write, execution any), --state (its folder in Sluice's data folder).
"""

import argparse
import asyncio
import gzip
import json
import os
import stat

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import common
from common import call, check, ok, refused, sluice

P = {"project": "demo"}


def tree(root):
    """Every entry below `root` (not .git) with its bytes and mode; links with their target."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                out[rel + "/"] = ("dir", oct(st.st_mode & 0o777))
            else:
                with open(path, "rb") as f:
                    out[rel] = (f.read(), oct(st.st_mode & 0o777))
    return out


def stored(state):
    """Every byte Sluice keeps for the project's checkpoints, manifests inflated."""
    data = b""
    for dirpath, _, filenames in os.walk(os.path.join(state, "checkpoints")):
        for name in filenames:
            with open(os.path.join(dirpath, name), "rb") as f:
                raw = f.read()
            data += gzip.decompress(raw) if name.endswith(".gz") else raw
    return data


async def pending(binary):
    code, out, err = await sluice(binary, "approvals", "list", "--json")
    check(code == 0, "approvals list works", err)
    return [a for a in json.loads(out) if a["state"] == "pending"]


async def decided(client, binary, tool, args, verdict, meanwhile=None):
    """Calls `tool`; the user answers its approval with `verdict` through the CLI (after running
    `meanwhile`, if given, while the call waits). Returns the result and the approvals."""
    task = asyncio.create_task(call(client, tool, args))
    seen = []
    while not task.done():
        for a in await pending(binary):
            if a["tool"] == tool:
                seen.append(a)
                if meanwhile:
                    meanwhile()
                code, _, err = await sluice(binary, "approvals", verdict, a["id"])
                check(code == 0, f"approvals {verdict} works", err)
        await asyncio.wait({task}, timeout=0.1)
    return task.result(), seen


async def exercise(client, binary, root, state):
    canary = os.environ["SLUICE_CANARY"]
    env_before = open(os.path.join(root, ".env"), "rb").read()
    listed = await ok(client, "list_checkpoints", P)
    check(listed["checkpoints"] == [], "no checkpoint yet", listed)
    before = tree(root)

    # The generator, approved: a checkpoint is taken before it runs, and its id comes back.
    res, seen = await decided(client, binary, "run_command",
                              {**P, "program": "/usr/bin/python3", "args": ["gen.py"]}, "approve")
    out = res.structured_content
    check(not res.is_error and out["state"] == "succeeded", "the generator ran", out)
    ckpt = out["checkpoint_id"]
    check(ckpt and ckpt.startswith("ckpt_") and out["checkpoint_skipped"] is None,
          "the result names the checkpoint taken before it", out)
    generated = tree(root)
    check(generated != before, "the generator changed the tree", generated)
    check(generated["run.sh"][1] == "0o644" and "doomed.txt" not in generated,
          "it chmod'ed and deleted", generated)
    listed = await ok(client, "list_checkpoints", P)
    entry = listed["checkpoints"][0]
    check(entry["checkpoint_id"] == ckpt and entry["automatic"]
          and "gen.py" in (entry["before_command"] or ""), "listed as taken before it", entry)
    check(listed["stored_bytes"] > 0 and entry["files"] >= 5, "with its size", listed)
    jobs = await ok(client, "list_jobs", P)
    check(any(j.get("checkpoint_id") == ckpt for j in jobs["jobs"]),
          "the job carries the checkpoint", jobs)
    data = stored(state)
    check(canary.encode() not in data, "the shield's .env is never stored", len(data))
    check(b"ref: refs/heads" not in data, ".git is never stored", len(data))

    # A restore asks (it replaces the tree like a delete); an auto-run file in it is named, and a
    # denial changes nothing.
    args = {**P, "checkpoint_id": ckpt}
    res, seen = await decided(client, binary, "restore_checkpoint", args, "deny")
    check(res.is_error and res.structured_content["code"] == "denied", "denied", res)
    hits = [h["path"] for h in (seen[0].get("autorun") or [])]
    check(".vscode/tasks.json" in hits, "the approval names the auto-run file", seen)
    check(tree(root) == generated, "a denied restore changed nothing", tree(root))

    # A change while the user looks at the approval: the restore refuses and changes nothing.
    typed = os.path.join(root, "a.txt")

    def type_meanwhile():
        with open(typed, "w") as f:
            f.write("the user typed this meanwhile\n")

    res, seen = await decided(client, binary, "restore_checkpoint", args, "approve",
                              meanwhile=type_meanwhile)
    check(res.is_error and res.structured_content["code"] == "conflict",
          "a concurrent change makes the restore refuse", res.structured_content)
    now = tree(root)
    check(now["a.txt"][0] == b"the user typed this meanwhile\n", "the new text stays", now)
    del now["a.txt"]
    expected = dict(generated)
    del expected["a.txt"]
    check(now == expected, "and nothing else changed", now)

    # Approved with nothing in the way: the tree as it was, byte for byte, modes included.
    res, seen = await decided(client, binary, "restore_checkpoint", args, "approve")
    check(not res.is_error, "the restore succeeds", res.structured_content)
    op = res.structured_content["operation_id"]
    after = tree(root)
    ignored = after.pop("build/out.o")
    check(ignored[0] == b"rebuilt\n", "an ignored file is none of the checkpoint's business",
          ignored)
    want = dict(before)
    del want["build/out.o"]
    check(after == want, "the tree is back byte for byte", sorted(set(after.items()) ^ set(want.items())))
    check(open(os.path.join(root, ".env"), "rb").read() == env_before, ".env untouched")

    # The restore of the restore brings back what the generator (and the user) left.
    res, _ = await decided(client, binary, "restore", {**P, "operation_id": op}, "approve")
    check(not res.is_error, "restore of the restore succeeds", res.structured_content)
    undone = tree(root)
    check(undone["a.txt"][0] == b"the user typed this meanwhile\n"
          and undone["run.sh"][1] == "0o644" and "doomed.txt" not in undone,
          "the generator's tree is back", undone)

    # A manifest tampered with in the state folder cannot aim a restore at the shield's file.
    manifest = os.path.join(state, "checkpoints", "manifests", f"{ckpt}.json.gz")
    original = open(manifest, "rb").read()
    doc = json.loads(gzip.decompress(original))
    first_file = next(e for e in doc["entries"] if e["k"] == "file")
    doc["entries"].append({**first_file, "p": ".env"})
    with open(manifest, "wb") as f:
        f.write(gzip.compress(json.dumps(doc).encode()))
    await refused(client, "restore_checkpoint", args, "path_shielded")
    check(open(os.path.join(root, ".env"), "rb").read() == env_before, ".env still untouched")
    with open(manifest, "wb") as f:
        f.write(original)

    # Read-only tools and refusals.
    await refused(client, "restore_checkpoint", {**P, "checkpoint_id": "ckpt_0000000000000000"}, "not_found")
    await refused(client, "restore_checkpoint", {**P, "checkpoint_id": "../x"}, "invalid_argument")
    named = await ok(client, "create_checkpoint", {**P, "name": "by hand"})
    check(named["name"] == "by hand" and not named["automatic"], "a named checkpoint", named)

    # The user's side: the job history names the checkpoint; list and restore, no approval.
    code, text, err = await sluice(binary, "jobs", "--json")
    check(code == 0 and any(j.get("checkpoint") == ckpt for j in json.loads(text)),
          "sluice jobs names the checkpoint taken before the job", text + err)
    code, text, err = await sluice(binary, "checkpoint", "list", "demo")
    check(code == 0 and ckpt in text and "gen.py" in text and "Stored:" in text,
          "the CLI lists them", text + err)
    check(root not in text and state not in text, "no physical path in the CLI's list", text)
    code, text, err = await sluice(binary, "checkpoint", "restore", "demo", ckpt)
    check(code == 0 and "Restored" in text, "the user restores from the CLI", text + err)
    check(not await pending(binary), "without an approval")
    final = tree(root)
    final.pop("build/out.o", None)
    check(final == want, "the tree is the checkpoint's again", final)


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--sluice", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--state", required=True)
    args = ap.parse_args()
    token = os.environ["SLUICE_TOKEN"]
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with Client(streamable_http_client(args.url, http_client=http), cache=None) as client:
        await exercise(client, args.sluice, args.dir, args.state)
    print(f"OK {common.no_canary_anywhere()} checks")


asyncio.run(main())
