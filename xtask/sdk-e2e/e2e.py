"""What every sdk-e2e flow shares beyond `flowlib` (the scratch paths, the simulator's request
log, the PASS/FAIL line): the options an app passes, and the SDK's results.

`cargo xtask sdk-e2e` runs each flow as `python NN_name.py` with flowlib's variables set and
SDK_E2E_CLI (the CLI under test). A flow is `async def flow() -> str` (see flowlib); the
helpers flows use are importable from here.
"""

import asyncio
import os
from typing import Any, Awaitable, Callable

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage

import flowlib
from flowlib import (  # noqa: F401 - re-exported for the flows
    HOME,
    MOCK_LOG,
    MOCK_URL,
    PROJECT,
    FlowFailed,
    check,
    check_cache_read,
    check_continues,
    request_answered_by,
    requests,
    rules_seen,
    texts,
    wait_for_rule,
)

CLI = os.environ["SDK_E2E_CLI"]

_cli_stderr: list[str] = []


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
    """Runs `flow` (flowlib's `run`), a failure's line ending with the CLI's last stderr lines."""
    flowlib.run(flow, _cli_stderr_tail)


def _cli_stderr_tail() -> str:
    tail = [line for line in _cli_stderr if line.strip()][-3:]
    return ("CLI stderr: " + " / ".join(line.strip()[:200] for line in tail)) if tail else ""
