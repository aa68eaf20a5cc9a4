"""7. A second prompt in one session reads >= 90% of its prompt from the cache."""

from e2e import Editor, agent, initialize, message_text, new_session, prompt, run
from flowlib import check, check_cache_read


async def flow() -> str:
    async with agent(Editor()) as (conn, wire, _process):
        await initialize(conn)
        session = await new_session(conn)
        await prompt(conn, session, "First question: what is tine?")
        mark = wire.mark()
        stop = await prompt(conn, session, "Second question: does it start fast?")
        text = message_text(wire.updates(session, mark))
    check(stop == "end_turn", f"the second prompt's stopReason is {stop!r}, not end_turn")
    check("Yes, it starts fast." in text, f"the second prompt's text is {text!r}")
    return check_cache_read("second prompt", "the second prompt")


run(flow)
