"""Code intelligence as the official Python MCP SDK (written by others) uses it over Streamable
HTTP, on a small real project in three languages: the four code tools are listed read-only and
described; code_outline shows a file's definitions, code_symbols finds them by name,
code_definition goes from a use to the definition in another file (a qualified name picks the
one inside its container), code_references finds the uses in code and not the ones in comments
or strings. What the index must not read stays out: a shielded file (`id_rsa*`, defining a
function), a `.gitignore`d folder, a file outside the project through a link. No answer holds a
physical path. Exits non-zero on the first failed check.

Environment: SLUICE_TOKEN, SLUICE_CANARY, SLUICE_ROOT (the project's physical root, which must
appear in no answer).
Arguments: --url, --project.
"""

import argparse
import asyncio
import json
import os

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import common
from common import call, check, ok, refused

CODE_TOOLS = {"code_outline", "code_symbols", "code_definition", "code_references"}


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--project", required=True)
    args = ap.parse_args()
    p = {"project": args.project}
    root = os.environ["SLUICE_ROOT"]
    answers = []

    async def answer(tool, extra):
        out = await ok(client, tool, {**p, **extra})
        answers.append(json.dumps(out))
        check(out.get("tier") == "syntax", f"{tool} says which tier answered", out)
        return out

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {os.environ['SLUICE_TOKEN']}"})
    async with Client(streamable_http_client(args.url, http_client=http), cache=None) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        check(CODE_TOOLS <= set(tools), "the code tools are listed", sorted(tools))
        for name in CODE_TOOLS:
            t = tools[name]
            check(t.annotations.read_only_hint is True, f"{name} is read-only", t.annotations)
            check(t.output_schema is not None and len(t.description) > 80,
                  f"{name} is described and declares its output", t.description)

        outline = await answer("code_outline", {"path": "src/engine.rs"})
        names = [(s["name"], s["kind"], s.get("container")) for s in outline["symbols"]]
        check(("Engine", "class", None) in names and ("start", "method", "Engine") in names,
              "the outline has the struct and its method", names)
        check(outline["language"] == "rust", "the outline names its language", outline)

        found = await answer("code_symbols", {"query": "start"})
        check({(s["path"], s["name"]) for s in found["symbols"]} >= {
            ("src/engine.rs", "start"), ("src/tunnel.rs", "start"), ("web/app.ts", "startApp")},
            "code_symbols finds every start", found)
        funcs = await answer("code_symbols", {"query": "start", "kind": "function"})
        check([s["name"] for s in funcs["symbols"]] == ["startApp"], "a kind filters", funcs)

        defs = await answer("code_definition", {"name": "Engine::start", "path": "src/main.rs"})
        check([(d["path"], d["line"]) for d in defs["definitions"]] == [("src/engine.rs", 3)],
              "the qualified name goes to Engine's start", defs)
        check(defs["definitions"][0]["text"] == "pub fn start(&self) -> u32 {",
              "with its first line, not the file", defs)
        py = await answer("code_definition", {"name": "parse", "path": "tools/run.py"})
        check([d["path"] for d in py["definitions"]] == ["tools/util.py"], "Python too", py)

        refs = await answer("code_references", {"name": "parse"})
        at = [(r["path"], r["line"], r["is_definition"]) for r in refs["references"]]
        check(at == [("tools/run.py", 1, False), ("tools/run.py", 4, False),
                     ("tools/util.py", 1, True)], "uses in code only, the definition marked", at)

        # What the index must not read: the shield, .gitignore, a link out of the project.
        for hidden in ["canary_function", "generated_function", "outside_function"]:
            s = await answer("code_symbols", {"query": hidden})
            check(s["symbols"] == [], f"{hidden} is not indexed", s)
            r = await answer("code_references", {"name": hidden})
            check(r["references"] == [], f"{hidden} is not searched", r)
        await refused(client, "code_outline", {**p, "path": "id_rsa_helper.py"}, {"path_shielded"})
        await refused(client, "code_outline", {**p, "path": "../outside.py"},
                      {"path_invalid", "path_outside_project"})
        await refused(client, "code_outline", {**p, "path": "out/link.py"},
                      {"path_outside_project", "not_found", "path_invalid"})
        await refused(client, "code_outline", {**p, "path": "README.md"}, {"invalid_argument"})
        await refused(client, "code_definition", {**p, "name": ""}, {"invalid_argument"})

    everything = "\n".join(answers)
    check(root not in everything, "no answer holds the physical path", everything[:300])
    print(f"OK {common.no_canary_anywhere()} checks")


asyncio.run(main())
