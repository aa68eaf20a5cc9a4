"""8. session/cancel during a slow reply: the prompt answers stopReason cancelled within 5 s."""

import asyncio
import time

from e2e import Editor, agent, initialize, message_text, new_session, prompt, run, show
from flowlib import check, wait_for_rule

# The slow reply streams for about 50 s (130 chunks, 400 ms apart).
CANCEL_WITHIN_S = 5


async def flow() -> str:
    async with agent(Editor()) as (conn, wire, _process):
        await initialize(conn)
        session = await new_session(conn)
        mark = wire.mark()
        turn = asyncio.create_task(prompt(conn, session, "Tell me a very slow story.", seconds=90))
        await wait_for_rule("slow story", 30)
        deadline = time.monotonic() + 20
        while not message_text(wire.updates(session, mark)) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)  # the reply is streaming once a chunk has arrived
        streamed = message_text(wire.updates(session, mark))
        check(streamed, "no agent_message_chunk arrived within 20 s of the slow reply starting")
        started = time.monotonic()
        await conn.cancel(session_id=session)
        done, _ = await asyncio.wait({turn}, timeout=CANCEL_WITHIN_S)
        took = time.monotonic() - started
        check(done, f"the prompt did not answer within {CANCEL_WITHIN_S} s of session/cancel "
                    f"(updates since: {len(wire.updates(session, mark))})")
        stop = turn.result()
        check(stop == "cancelled", f"the prompt answered stopReason {stop!r} after session/cancel, "
                                   f"not cancelled: {show(wire.result_of('session/prompt'))}")
    return f"stopReason cancelled {took:.2f} s after session/cancel, {len(streamed)} characters streamed"


run(flow)
