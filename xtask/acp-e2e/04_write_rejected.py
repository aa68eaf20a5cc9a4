"""4. A Write asked and rejected (reject_once): the file is unchanged, fs/write_text_file never called."""

from e2e import Editor, agent, initialize, new_session, prompt, run, show, tool_calls
from flowlib import PROJECT, check, request_answered_by, requests

OLD = "mode = old\n"
KINDS = {"allow_once", "allow_always", "reject_once"}


async def flow() -> str:
    path = PROJECT / "config.txt"
    path.write_text(OLD)
    async with agent(Editor(permission="reject_once")) as (conn, wire, _process):
        await initialize(conn)
        session = await new_session(conn)
        mark = wire.mark()
        stop = await prompt(conn, session, f"Set mode to new in {path}.")
        updates = wire.updates(session, mark)
        asks = wire.calls("session/request_permission", mark)
        writes = wire.calls("fs/write_text_file", mark)
    request_answered_by("write the file", wait_s=1)
    calls = tool_calls(updates)
    check(len(asks) == 1, f"want one session/request_permission (for the Write), saw {len(asks)}: {show(asks)}")
    ask = asks[0]
    kinds = {o.get("kind") for o in ask.get("options") or []}
    check(KINDS <= kinds, f"the options lack {sorted(KINDS - kinds)}: {show(ask.get('options'))}")
    asked_id = (ask.get("toolCall") or {}).get("toolCallId")
    check(asked_id in calls, f"the permission's toolCallId {asked_id!r} is no streamed tool call: "
                             f"{show(ask.get('toolCall'))}; tool calls {show(list(calls))}")
    check(not writes, f"fs/write_text_file was called after reject_once: {show(writes)}")
    check(path.read_text() == OLD, f"the file changed after reject_once: {path.read_text()!r}")
    seen = f"reject_once answered; file unchanged, no fs/write_text_file; stopReason {stop}"
    # Where the agent went on after the rejection, the model must see it as a failed call.
    after = [r for r in requests() if r.get("rule") == "after the rejection"]
    if after:
        results = [b for b in after[0]["body"]["messages"][-1]["content"] if b.get("type") == "tool_result"]
        check(results and results[0].get("is_error") is True,
              f"the rejected Write's tool_result is not an error: {show(results)}")
        seen += f"; the model saw {show(results[0].get('content'), 120)}"
    return f"{seen}; the Write's status {calls[asked_id].get('status')!r}"


run(flow)
