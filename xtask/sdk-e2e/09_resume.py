"""9. resume=<session id> of an earlier query(): the resumed request carries the earlier messages."""

from claude_agent_sdk import query

from e2e import check, check_continues, options, run, the_result


async def flow() -> str:
    first = the_result([m async for m in query(prompt="Remember the word PINEAPPLE.",
                                               options=options())])
    check(first.result == "Noted.", f"the first result is {first.result!r}")
    resumed = the_result([m async for m in query(prompt="What was the word?",
                                                 options=options(resume=first.session_id))])
    earlier = check_continues("recall", "PINEAPPLE", "Noted.", "resumed")
    check(resumed.result == "The word was PINEAPPLE.", f"the resumed result is {resumed.result!r}")
    return f"the resumed request carried {earlier} earlier messages of {first.session_id}"


run(flow)
