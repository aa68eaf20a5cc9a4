"""What the Python end-to-end suites share (`cargo xtask sdk-e2e`, `cargo xtask acp-e2e`): the
scratch paths, the simulator's request log, and the PASS/FAIL line the xtask reads.

The xtask runs each flow as `python NN_name.py` (this directory on PYTHONPATH) with these
variables set: E2E_MOCK_URL (the simulator, started with NN_name.json), E2E_MOCK_LOG (its
requests.jsonl), E2E_PROJECT (an empty scratch project) and E2E_HOME (a scratch home for the
program's sessions and settings), plus the suite's own variable naming the program under test.

A flow is `async def flow() -> str`: it returns what it saw when the flow holds, and calls
`check(condition, reason)` (or raises) when it does not. `run(flow)` prints its last line of
stdout, `PASS: ...` or `FAIL: ...`; the exit status says the same.
"""

import asyncio
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Awaitable, Callable

MOCK_URL = os.environ["E2E_MOCK_URL"]
MOCK_LOG = Path(os.environ["E2E_MOCK_LOG"])
PROJECT = Path(os.environ["E2E_PROJECT"])
HOME = Path(os.environ["E2E_HOME"])

# The whole flow, a client's own startup timeouts included.
FLOW_TIMEOUT_S = 100


class FlowFailed(Exception):
    """The flow did not hold; the message says what was seen instead."""


def check(condition: Any, reason: str) -> None:
    """Fails the flow with `reason` unless `condition` holds."""
    if not condition:
        raise FlowFailed(reason)


def requests() -> list[dict[str, Any]]:
    """The simulator's model requests so far, oldest first (the JSONL log's records)."""
    if not MOCK_LOG.exists():
        return []
    records = []
    for line in MOCK_LOG.read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            if record.get("number", 0) > 0:
                records.append(record)
    return records


def rules_seen() -> str:
    """The rules that answered, in order, for a failure's reason."""
    return ", ".join(str(r.get("rule") or f"error {r.get('status')}") for r in requests()) or "none"


def _answered_by(rule: str) -> dict[str, Any] | None:
    return next((r for r in requests() if r.get("rule") == rule), None)


def _never_answered(rule: str) -> FlowFailed:
    return FlowFailed(f"the simulator never answered with rule {rule!r} (rules seen: {rules_seen()})")


def request_answered_by(rule: str, wait_s: float = 5.0) -> dict[str, Any]:
    """The first request the scenario's rule `rule` answered; waits a little for the log."""
    deadline = time.monotonic() + wait_s
    while (record := _answered_by(rule)) is None:
        if time.monotonic() >= deadline:
            raise _never_answered(rule)
        time.sleep(0.1)
    return record


async def wait_for_rule(rule: str, wait_s: float) -> dict[str, Any]:
    """Like `request_answered_by`, without blocking the event loop (for use mid-flow)."""
    deadline = time.monotonic() + wait_s
    while (record := _answered_by(rule)) is None:
        if time.monotonic() >= deadline:
            raise _never_answered(rule)
        await asyncio.sleep(0.1)
    return record


def texts(content: Any) -> str:
    """Every text in a message's content (tool results' contents included), joined."""
    if isinstance(content, str):
        return content
    out = []
    for block in content or []:
        if block.get("type") == "text":
            out.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            out.append(texts(block.get("content")))
    return "\n".join(out)


def check_cache_read(rule: str, what: str, at_least: float = 0.9) -> str:
    """Fails unless the request rule `rule` answered read `at_least` of its prompt from the
    cache (the simulator's own accounting); says what it read, `what` naming the request."""
    usage = request_answered_by(rule)["usage"]
    read = usage["cache_read_input_tokens"]
    total = read + usage["cache_creation_input_tokens"] + usage["input_tokens"]
    share = read / total if total else 0.0
    check(share >= at_least, f"{what} read {read} of {total} prompt tokens from the cache "
                             f"({share:.0%}, want >= {at_least:.0%})")
    return f"{what} read {read} of {total} prompt tokens from the cache ({share:.1%})"


def check_continues(rule: str, prompt: str, answer: str, what: str) -> int:
    """Fails unless the request rule `rule` answered carries, before its last message, a user
    message with `prompt` and an assistant one with `answer` (a conversation continued, `what`
    naming it); how many earlier messages it carries."""
    messages = request_answered_by(rule)["body"]["messages"]
    earlier = [(m["role"], texts(m["content"])) for m in messages[:-1]]
    check(any(role == "user" and prompt in text for role, text in earlier),
          f"the {what} request lacks the earlier prompt: {earlier}")
    check(any(role == "assistant" and answer in text for role, text in earlier),
          f"the {what} request lacks the earlier reply: {earlier}")
    return len(earlier)


def run(flow: Callable[[], Awaitable[str]], note: Callable[[], str] = lambda: "") -> None:
    """Runs `flow`, prints its PASS/FAIL line and exits with its status; a failure's line ends
    with `note()` (the program's last stderr lines, say)."""
    try:
        seen = asyncio.run(asyncio.wait_for(flow(), FLOW_TIMEOUT_S))
    except FlowFailed as failure:
        _fail(str(failure), note)
    except asyncio.TimeoutError:
        _fail(f"no end after {FLOW_TIMEOUT_S} s (rules seen: {rules_seen()})", note)
    except Exception as error:  # noqa: BLE001 - any error is the flow's failure
        traceback.print_exc(file=sys.stderr)
        _fail(f"{type(error).__name__}: {' '.join(str(error).split())[:300]}", note)
    print(f"PASS: {seen}", flush=True)
    sys.exit(0)


def _fail(reason: str, note: Callable[[], str]) -> None:
    try:
        extra = note()
    except Exception as error:  # noqa: BLE001 - the note must not hide the failure
        extra = f"(no note: {error})"
    print(f"FAIL: {reason}{' | ' + extra if extra else ''}", flush=True)
    sys.exit(1)
