"""3. Read uses the editor's unsaved buffer (fs/read_text_file), not the file on disk."""

from e2e import Editor, agent, initialize, new_session, prompt, run, show
from flowlib import PROJECT, check, request_answered_by, rules_seen, texts


async def flow() -> str:
    path = PROJECT / "draft.txt"
    path.write_text("saved on disk: DISK-1111\n")
    editor = Editor()
    editor.buffers[str(path)] = "typed in the editor, not saved: BUFFER-2222\n"
    async with agent(editor) as (conn, wire, _process):
        await initialize(conn)
        session = await new_session(conn)
        stop = await prompt(conn, session, f"Read the file {path} and tell me what it says.")
        reads = wire.calls("fs/read_text_file")
    check(reads, f"the agent never called fs/read_text_file (rules seen: {rules_seen()})")
    check(any(r.get("path") == str(path) and r.get("sessionId") == session for r in reads),
          f"fs/read_text_file did not ask for {path} in session {session}: {show(reads)}")
    record = request_answered_by("saw the buffer", wait_s=1)
    result = texts(record["body"]["messages"][-1]["content"])
    check("BUFFER-2222" in result and "DISK-1111" not in result,
          f"the model's tool_result is not the buffer's text: {result!r}")
    check(stop == "end_turn", f"stopReason is {stop!r}, not end_turn")
    return f"fs/read_text_file {show(reads[0], 160)}; the model's tool_result: {result.strip()!r}"


run(flow)
