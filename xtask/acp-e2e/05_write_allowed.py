"""5. The same Write rejected, then asked again and allowed (allow_once): applied via fs/write_text_file."""

from e2e import Editor, agent, initialize, new_session, prompt, run, show, tool_calls
from flowlib import PROJECT, check, request_answered_by

OLD, NEW = "mode = old\n", "mode = new\n"


async def flow() -> str:
    path = PROJECT / "config.txt"
    path.write_text(OLD)
    editor = Editor(permission="reject_once")
    async with agent(editor) as (conn, wire, _process):
        await initialize(conn)
        session = await new_session(conn)
        await prompt(conn, session, f"Set mode to new in {path}.")
        check(path.read_text() == OLD and not wire.calls("fs/write_text_file"),
              f"the rejected Write changed the file: {path.read_text()!r}")
        editor.permission = "allow_once"
        mark = wire.mark()
        stop = await prompt(conn, session, f"Try again: set mode to new in {path}. I will allow it.")
        updates = wire.updates(session, mark)
        asks = wire.calls("session/request_permission", mark)
        writes = wire.calls("fs/write_text_file", mark)
    request_answered_by("write again", wait_s=1)
    check(len(asks) == 1, f"want one session/request_permission for the second Write, saw {len(asks)}: {show(asks)}")
    check(len(writes) == 1 and writes[0].get("path") == str(path) and writes[0].get("content") == NEW
          and writes[0].get("sessionId") == session,
          f"want one fs/write_text_file of {NEW!r} to {path}, saw {show(writes)}")
    check(path.read_text() == NEW, f"the file on disk is {path.read_text()!r} after the editor wrote it")
    asked_id = (asks[0].get("toolCall") or {}).get("toolCallId")
    calls = tool_calls(updates)
    check(asked_id in calls, f"the permission's toolCallId {asked_id!r} is no streamed tool call: "
                             f"{show(list(calls))}")
    call = calls[asked_id]
    check(call.get("status") == "completed",
          f"the allowed Write's last status is {call.get('status')!r}: {show(call['_updates'])}")
    diffs = [c for c in call.get("content") or [] if c.get("type") == "diff"]
    check(diffs, f"the allowed Write shows no diff content: {show(call['_updates'])}")
    diff = diffs[0]
    check(diff.get("path") == str(path) and diff.get("newText") == NEW and diff.get("oldText") == OLD,
          f"the diff is not {path}: {OLD!r} -> {NEW!r}: {show(diff)}")
    request_answered_by("written", wait_s=1)
    check(stop == "end_turn", f"the second prompt's stopReason is {stop!r}, not end_turn")
    return (f"allow_once answered; fs/write_text_file {show(writes[0], 200)}; Write completed with "
            f"a diff {show(diff, 160)}")


run(flow)
