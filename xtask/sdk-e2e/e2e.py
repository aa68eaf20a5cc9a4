"""What every sdk-e2e flow shares: the options an app passes, the simulator's request log,
and the PASS/FAIL line `cargo xtask sdk-e2e` reads.

`cargo xtask sdk-e2e` runs each flow as `python NN_name.py` with these variables set:
SDK_E2E_CLI (the CLI under test), SDK_E2E_MOCK_URL (the simulator, started with NN_name.json),
SDK_E2E_MOCK_LOG (its requests.jsonl), SDK_E2E_PROJECT (an empty scratch project) and
SDK_E2E_HOME (a scratch home for the CLI's sessions and settings).

A flow is `async def flow() -> str`: it returns what it saw when the flow holds, and calls
`check(condition, reason)` (or raises) when it does not. Its last line of stdout is
`PASS: ...` or `FAIL: ...`; the exit status says the same.
"""

import asyncio
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Awaitable, Callable

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage

CLI = os.environ["SDK_E2E_CLI"]
MOCK_URL = os.environ["SDK_E2E_MOCK_URL"]
MOCK_LOG = Path(os.environ["SDK_E2E_MOCK_LOG"])
PROJECT = Path(os.environ["SDK_E2E_PROJECT"])
HOME = Path(os.environ["SDK_E2E_HOME"])

# The whole flow, initialize's own 60 s timeout included.
FLOW_TIMEOUT_S = 100

_cli_stderr: list[str] = []


class FlowFailed(Exception):
    """The flow did not hold; the message says what was seen instead."""


def check(condition: Any, reason: str) -> None:
    """Fails the flow with `reason` unless `condition` holds."""
    if not condition:
        raise FlowFailed(reason)


def options(**kwargs: Any) -> ClaudeAgentOptions:
    """The options an app passes: the CLI, the project, the simulator's address and a key."""
    return ClaudeAgentOptions(
        cli_path=CLI,
        cwd=str(PROJECT),
        env={
            "ANTHROPIC_BASE_URL": MOCK_URL,
            "ANTHROPIC_API_KEY": "test",
            "TINE_HOME": str(HOME),
        },
        stderr=_cli_stderr.append,
        **kwargs,
    )


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


def request_answered_by(rule: str, wait_s: float = 5.0) -> dict[str, Any]:
    """The first request the scenario's rule `rule` answered; waits a little for the log."""
    deadline = time.monotonic() + wait_s
    while True:
        for record in requests():
            if record.get("rule") == rule:
                return record
        if time.monotonic() >= deadline:
            raise FlowFailed(
                f"the simulator never answered with rule {rule!r} (rules seen: {rules_seen()})"
            )
        time.sleep(0.1)


async def wait_for_rule(rule: str, wait_s: float) -> dict[str, Any]:
    """Like `request_answered_by`, without blocking the event loop (for use mid-flow)."""
    deadline = time.monotonic() + wait_s
    while True:
        for record in requests():
            if record.get("rule") == rule:
                return record
        if time.monotonic() >= deadline:
            raise FlowFailed(
                f"the simulator never answered with rule {rule!r} (rules seen: {rules_seen()})"
            )
        await asyncio.sleep(0.1)


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


async def response_within(client: Any, seconds: float, what: str) -> list[Any]:
    """A ClaudeSDKClient's messages up to its next ResultMessage, which must come in time."""
    messages: list[Any] = []

    async def collect() -> None:
        async for message in client.receive_response():
            messages.append(message)

    try:
        await asyncio.wait_for(collect(), seconds)
    except asyncio.TimeoutError:
        raise FlowFailed(
            f"{what}: no ResultMessage within {seconds:g} s "
            f"({len(messages)} messages; rules seen: {rules_seen()})"
        ) from None
    return messages


def the_result(messages: list[Any]) -> ResultMessage:
    """The run's ResultMessage; fails when there is none or it is an error."""
    results = [m for m in messages if isinstance(m, ResultMessage)]
    check(results, f"no ResultMessage among {len(messages)} messages")
    result = results[-1]
    check(
        not result.is_error,
        f"the result is an error ({result.subtype}): {result.result!r} {result.errors or ''}",
    )
    return result


def run(flow: Callable[[], Awaitable[str]]) -> None:
    """Runs `flow`, prints its PASS/FAIL line and exits with its status."""
    try:
        seen = asyncio.run(asyncio.wait_for(flow(), FLOW_TIMEOUT_S))
    except FlowFailed as failure:
        _fail(str(failure))
    except asyncio.TimeoutError:
        _fail(f"no end after {FLOW_TIMEOUT_S} s (rules seen: {rules_seen()})")
    except Exception as error:  # noqa: BLE001 - any error is the flow's failure
        traceback.print_exc(file=sys.stderr)
        _fail(f"{type(error).__name__}: {' '.join(str(error).split())[:300]}")
    print(f"PASS: {seen}", flush=True)
    sys.exit(0)


def _fail(reason: str) -> None:
    tail = [line for line in _cli_stderr if line.strip()][-3:]
    if tail:
        reason += " | CLI stderr: " + " / ".join(line.strip()[:200] for line in tail)
    print(f"FAIL: {reason}", flush=True)
    sys.exit(1)
