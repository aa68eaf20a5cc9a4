"""6. TodoWrite as a plan: a `plan` session/update with the entries (content, status, priority)."""

from e2e import Editor, agent, initialize, new_session, prompt, run, show
from flowlib import check, request_answered_by

WANT = [("Write the changelog", "completed"), ("Tag the release", "in_progress"),
        ("Publish the crates", "pending")]


async def flow() -> str:
    async with agent(Editor()) as (conn, wire, _process):
        await initialize(conn)
        session = await new_session(conn)
        mark = wire.mark()
        stop = await prompt(conn, session, "Plan the release, step by step.")
        plans = wire.updates(session, mark, kind="plan")
    request_answered_by("plan the release", wait_s=1)
    check(plans, f"no plan session/update arrived; the updates: "
                 f"{show([u.get('sessionUpdate') for u in wire.updates(session, mark)])}")
    entries = plans[-1].get("entries") or []
    got = [(e.get("content"), e.get("status")) for e in entries]
    check(got == WANT, f"the plan's entries are {show(entries)}, want {WANT}")
    priorities = [e.get("priority") for e in entries]
    check(all(p in ("high", "medium", "low") for p in priorities),
          f"the entries' priorities are {priorities}: {show(entries)}")
    check(stop == "end_turn", f"stopReason is {stop!r}, not end_turn")
    return f"{len(plans)} plan update(s); entries {show(entries, 300)}"


run(flow)
