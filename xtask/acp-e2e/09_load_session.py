"""9. session/load in a new process replays the conversation, and the next prompt continues it."""

from e2e import Editor, agent, initialize, message_text, new_session, prompt, run, show, within
from flowlib import PROJECT, check, check_continues


async def flow() -> str:
    async with agent(Editor()) as (conn, wire, process):
        await initialize(conn)
        session = await new_session(conn)
        stop = await prompt(conn, session, "Remember the word PINEAPPLE.")
        check(stop == "end_turn", f"the first prompt's stopReason is {stop!r}")
    first_exit = process.returncode
    async with agent(Editor()) as (conn, wire, _process):
        init = await initialize(conn)
        check(init.agent_capabilities and init.agent_capabilities.load_session,
              f"the new process does not offer loadSession: {show(wire.result_of('initialize'))}")
        await within(conn.load_session(cwd=str(PROJECT), session_id=session, mcp_servers=[]), 30,
                     f"session/load {session}")
        answered = wire.index_of_answer("session/load")
        replayed = [m["params"]["update"] for d, m in wire.messages[:answered]
                    if d == "in" and m.get("method") == "session/update"
                    and (m.get("params") or {}).get("sessionId") == session]
        user, agent_text = message_text(replayed, "user_message_chunk"), message_text(replayed)
        check("Remember the word PINEAPPLE." in user,
              f"the replay before session/load's answer has no user_message_chunk with the first "
              f"prompt: {show(replayed)}")
        check("Noted: PINEAPPLE." in agent_text,
              f"the replay has no agent_message_chunk with the answer: {show(replayed)}")
        kinds = [u.get("sessionUpdate") for u in replayed]
        first_user = kinds.index("user_message_chunk")
        check("agent_message_chunk" in kinds[first_user:],
              f"the replay's answer does not follow its prompt: {kinds}")
        mark = wire.mark()
        stop = await prompt(conn, session, "What was the word?")
        text = message_text(wire.updates(session, mark))
    check(stop == "end_turn", f"the prompt after session/load ends {stop!r}")
    earlier = check_continues("recall", "PINEAPPLE", "Noted: PINEAPPLE.", "continued")
    check("The word was PINEAPPLE." in text, f"the continued prompt's text is {text!r}")
    return (f"process A (exit {first_exit}) ran {session}; process B replayed {len(replayed)} updates "
            f"({', '.join(sorted(set(kinds)))}) and continued with {earlier} earlier messages")


run(flow)
