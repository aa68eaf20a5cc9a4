"""10. Two sessions in one process: a prompt in each at once, each ends end_turn with its own answer."""

import asyncio

from e2e import Editor, agent, initialize, message_text, new_session, prompt, run
from flowlib import check, request_answered_by, texts


async def flow() -> str:
    async with agent(Editor()) as (conn, wire, _process):
        await initialize(conn)
        alpha, beta = await new_session(conn), await new_session(conn)
        check(alpha != beta, f"session/new answered the same sessionId twice: {alpha}")
        stops = await asyncio.gather(prompt(conn, alpha, "Session alpha: say your name."),
                                     prompt(conn, beta, "Session beta: say your name."))
        texts_by_session = {s: message_text(wire.updates(s)) for s in (alpha, beta)}
    check(stops == ["end_turn", "end_turn"], f"the prompts' stopReasons are {stops}")
    check(texts_by_session[alpha] == "Answer for alpha.",
          f"session alpha's agent_message_chunks say {texts_by_session[alpha]!r}")
    check(texts_by_session[beta] == "Answer for beta.",
          f"session beta's agent_message_chunks say {texts_by_session[beta]!r}")
    for mine, other in (("alpha", "beta"), ("beta", "alpha")):
        messages = request_answered_by(mine)["body"]["messages"]
        check(not any(other in texts(m["content"]) for m in messages),
              f"session {mine}'s request carries session {other}'s conversation: {messages}")
    return f"sessions {alpha} and {beta} both ended end_turn, each with its own answer and history"


run(flow)
