"""2. A prompt whose reply calls Read: a streamed tool_call (kind read, title, locations), completed."""

from e2e import Editor, agent, initialize, message_text, new_session, only_call, prompt, run, show
from flowlib import PROJECT, check, request_answered_by


async def flow() -> str:
    path = PROJECT / "notes.txt"
    path.write_text("the marker is MARKER-7431\n")
    async with agent(Editor()) as (conn, wire, _process):
        await initialize(conn)
        session = await new_session(conn)
        mark = wire.mark()
        stop = await prompt(conn, session, f"Read the file {path} and tell me the marker.")
        updates = wire.updates(session, mark)
    request_answered_by("report the marker")
    check(stop == "end_turn", f"stopReason is {stop!r}, not end_turn")
    read = only_call(updates, "read")
    start = read["_updates"][0]
    check(start.get("sessionUpdate") == "tool_call",
          f"the Read's first update is not a tool_call: {show(start)}")
    check(start.get("kind") == "read", f"the Read's tool_call has kind {start.get('kind')!r}: {show(start)}")
    check(isinstance(start.get("title"), str) and start["title"].strip(),
          f"the Read's tool_call has no title: {show(start)}")
    locations = read.get("locations") or []
    check(any(loc.get("path") == str(path) for loc in locations),
          f"the Read's locations do not name {path}: {show(read['_updates'])}")
    raw_input = read.get("rawInput") or {}
    check(raw_input.get("file_path") == str(path), f"the Read's rawInput is {show(raw_input)}")
    later = read["_updates"][1:]
    check(any(u.get("sessionUpdate") == "tool_call_update" and u.get("status") == "completed" for u in later),
          f"no tool_call_update with status completed follows the Read: {show(read['_updates'])}")
    text = message_text(updates)
    check("The file holds MARKER-7431." in text,
          f"the agent_message_chunks do not carry the model's answer: {text!r}")
    check("Let me read it." in text, f"the agent_message_chunks lack the text before the call: {text!r}")
    return (f"tool_call {start['title']!r} kind read at {locations[0].get('path')}, completed; "
            f"stopReason end_turn; text {text!r}")


run(flow)
