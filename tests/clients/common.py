"""What the client-driving scripts share: a check that fails loudly (and exits at once — inside
the SDK's task groups an exception can wait forever on cleanup) and a record of every response,
so the scripts can assert at the end that no canary ever came back."""

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
