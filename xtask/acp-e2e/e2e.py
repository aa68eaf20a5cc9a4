"""What every acp-e2e check shares beyond `flowlib` (the scratch paths, the simulator's request
log, the PASS/FAIL line; checks import those from there): an editor, the agent under test, and
the JSON-RPC wire between them.

`cargo xtask acp-e2e` runs each check as `python NN_name.py` with flowlib's variables set and
ACP_E2E_AGENT (the agent's command line, a JSON list). A check spawns the agent with the
package's `spawn_agent_process` (`async with agent(editor) as conn`), the agent's stderr going
to `agent-N.err` and every message both ways to `wire-N.jsonl` in the check's directory.

`Editor` is the client side as an editor is: it offers `fs.readTextFile` (answering from its
unsaved buffers, else the disk) and `fs.writeTextFile` (writing the disk, as an editor saving
a buffer would) but no terminal, and answers `session/request_permission` with the option of
the kind a check sets. Checks judge the raw JSON the agent sent (`Wire`), not the package's
parsed models, which forgive some malformed values; failures quote it.
"""

import asyncio
import json
import os
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import acp
from acp.connection import StreamDirection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

import flowlib
from flowlib import HOME, MOCK_URL, PROJECT, FlowFailed, check, rules_seen

AGENT: list[str] = json.loads(os.environ["ACP_E2E_AGENT"])
RUN_DIR = Path.cwd()

# Lines longer than asyncio's 64 KiB default (a replayed session, a big diff) must still parse.
LINE_LIMIT = 50 * 1024 * 1024

_spawned: list[Path] = []  # the agents' stderr files, in spawn order


def show(value: Any, limit: int = 700) -> str:
    """`value` as compact JSON, cut to `limit` characters, for a failure's reason."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Wire:
    """Every JSON-RPC message between the editor and the agent, in order, as raw JSON."""

    def __init__(self, log: Path) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []  # ("in" | "out", message)
        self._log = log.open("w")

    def observe(self, event: Any) -> None:
        direction = "in" if event.direction == StreamDirection.INCOMING else "out"
        self.messages.append((direction, event.message))
        self._log.write(json.dumps({"dir": direction, "msg": event.message}) + "\n")
        self._log.flush()

    def mark(self) -> int:
        """A position, for what came after it (`since`)."""
        return len(self.messages)

    def since(self, mark: int) -> list[tuple[str, dict[str, Any]]]:
        return self.messages[mark:]

    def calls(self, method: str, mark: int = 0) -> list[dict[str, Any]]:
        """The params of every request or notification `method` the agent sent."""
        return [m.get("params") or {} for d, m in self.since(mark) if d == "in" and m.get("method") == method]

    def updates(self, session_id: str | None = None, mark: int = 0, kind: str | None = None) -> list[dict[str, Any]]:
        """The `update` objects of the agent's `session/update` notifications (for a session, of
        a `sessionUpdate` kind), in order."""
        out = []
        for params in self.calls("session/update", mark):
            update = params.get("update") or {}
            if session_id is not None and params.get("sessionId") != session_id:
                continue
            if kind is not None and update.get("sessionUpdate") != kind:
                continue
            out.append(update)
        return out

    def result_of(self, method: str) -> Any:
        """The raw `result` (or `error`) of the editor's last `method` request that has one."""
        ids = [m["id"] for d, m in self.messages if d == "out" and m.get("method") == method and "id" in m]
        for request_id in reversed(ids):
            for d, m in self.messages:
                if d == "in" and m.get("id") == request_id and "method" not in m:
                    return m.get("result", {"error": m.get("error")})
        raise FlowFailed(f"the agent never answered {method}")

    def index_of_answer(self, method: str) -> int:
        """Where the answer to the editor's last `method` request stands in `messages`."""
        ids = [m["id"] for d, m in self.messages if d == "out" and m.get("method") == method and "id" in m]
        check(ids, f"the editor never sent {method}")
        for i, (d, m) in enumerate(self.messages):
            if d == "in" and m.get("id") == ids[-1] and "method" not in m:
                return i
        raise FlowFailed(f"the agent never answered {method}")


class Editor:
    """The client side: an editor offering fs (its unsaved buffers first) but no terminal."""

    def __init__(self, permission: str | None = None) -> None:
        # Unsaved buffers by absolute path: what `fs/read_text_file` answers instead of the disk.
        self.buffers: dict[str, str] = {}
        # The kind of option `session/request_permission` is answered with (`allow_once`,
        # `reject_once`, ...); None answers `cancelled`, as an editor closing the prompt does.
        self.permission = permission

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        pass  # judged on the wire

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        text = self.buffers[path] if path in self.buffers else Path(path).read_text()
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start : start + limit] if limit is not None else lines[start:])
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        Path(path).write_text(content)
        self.buffers.pop(path, None)
        return WriteTextFileResponse()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        chosen = next((o for o in options if o.kind == self.permission), None)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=chosen.option_id))


@asynccontextmanager
async def agent(editor: Editor) -> AsyncIterator[tuple[Any, Wire, Any]]:
    """The agent under test, spawned in the project with the simulator's address: the
    connection, its wire and the process. Leaving closes its stdin and waits for it to exit."""
    n = len(_spawned) + 1
    stderr_path = RUN_DIR / f"agent-{n}.err"
    _spawned.append(stderr_path)
    wire = Wire(RUN_DIR / f"wire-{n}.jsonl")
    env = {
        "ANTHROPIC_BASE_URL": MOCK_URL,
        "ANTHROPIC_API_KEY": "test",
        "TINE_HOME": str(HOME),
        "CLAUDE_CONFIG_DIR": os.environ.get("CLAUDE_CONFIG_DIR", str(HOME / "claude")),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    with stderr_path.open("w") as stderr:
        async with acp.spawn_agent_process(
            editor,
            AGENT[0],
            *AGENT[1:],
            env=env,
            cwd=PROJECT,
            transport_kwargs={"stderr": stderr, "limit": LINE_LIMIT},
            observers=[wire.observe],
        ) as (conn, process):
            yield conn, wire, process


async def initialize(conn: Any) -> Any:
    """`initialize` as an editor with fs read and write but no terminal sends it."""
    return await within(
        conn.initialize(
            protocol_version=1,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=False
            ),
            client_info=Implementation(name="acp-e2e", title="tine acp-e2e", version="1"),
        ),
        30,
        "initialize",
    )


async def new_session(conn: Any) -> str:
    """`session/new` in the project, without MCP servers: the session id."""
    response = await within(conn.new_session(cwd=str(PROJECT), mcp_servers=[]), 30, "session/new")
    check(response.session_id, f"session/new answered no sessionId: {response!r}")
    return response.session_id


async def prompt(conn: Any, session_id: str, text: str, seconds: float = 60) -> str:
    """A text prompt; its `stopReason`."""
    response = await within(
        conn.prompt(session_id=session_id, prompt=[acp.text_block(text)]), seconds, f"the prompt {text!r}"
    )
    return response.stop_reason


async def within(awaitable: Any, seconds: float, what: str) -> Any:
    """`awaitable`'s value, which must come within `seconds`."""
    try:
        return await asyncio.wait_for(awaitable, seconds)
    except asyncio.TimeoutError:
        raise FlowFailed(f"{what}: no answer within {seconds:g} s (rules seen: {rules_seen()})") from None


def message_text(updates: list[dict[str, Any]], kind: str = "agent_message_chunk") -> str:
    """The text of the `kind` chunks among `updates`, joined."""
    return "".join(
        (u.get("content") or {}).get("text", "")
        for u in updates
        if u.get("sessionUpdate") == kind and (u.get("content") or {}).get("type") == "text"
    )


def tool_calls(updates: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each tool call as the editor shows it once `updates` are applied: its `tool_call`, then
    every field a `tool_call_update` carries replacing the one before (ACP's rule), with the
    raw updates kept in `_updates`. Keyed by toolCallId, in the order they started."""
    calls: dict[str, dict[str, Any]] = {}
    for u in updates:
        kind = u.get("sessionUpdate")
        if kind not in ("tool_call", "tool_call_update"):
            continue
        call = calls.setdefault(u.get("toolCallId"), {"_updates": []})
        call["_updates"].append(u)
        call.update({k: v for k, v in u.items() if k != "sessionUpdate" and v is not None})
    return calls


def only_call(updates: list[dict[str, Any]], title_or_kind: str) -> dict[str, Any]:
    """The one tool call whose kind is `title_or_kind` or whose title mentions it."""
    calls = tool_calls(updates)
    found = [
        c for c in calls.values() if c.get("kind") == title_or_kind or title_or_kind.lower() in str(c.get("title", "")).lower()
    ]
    check(len(found) == 1, f"want one {title_or_kind} tool call, saw {len(found)}: {show(list(calls.values()))}")
    return found[0]


def run(flow: Callable[[], Any]) -> None:
    """Runs `flow` (flowlib's `run`), a failure's line ending with the agent's last stderr lines."""
    flowlib.run(flow, _agent_stderr_tail)


def _agent_stderr_tail() -> str:
    tails = []
    for path in _spawned:
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
        if lines:
            tails.append(f"{path.name}: " + " / ".join(line[:200] for line in lines[-3:]))
    return " | ".join(tails)
