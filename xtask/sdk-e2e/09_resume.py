"""9. resume=<session id> of an earlier query(): the resumed request carries the earlier messages."""

from claude_agent_sdk import query

from e2e import check, options, request_answered_by, run, texts, the_result


async def flow() -> str:
    first = the_result([m async for m in query(prompt="Remember the word PINEAPPLE.",
                                               options=options())])
    check(first.result == "Noted.", f"the first result is {first.result!r}")
    resumed = the_result([m async for m in query(prompt="What was the word?",
                                                 options=options(resume=first.session_id))])
    messages = request_answered_by("recall")["body"]["messages"]
    earlier = [(m["role"], texts(m["content"])) for m in messages[:-1]]
    check(any(role == "user" and "PINEAPPLE" in text for role, text in earlier),
          f"the resumed request lacks the earlier prompt: {earlier}")
    check(any(role == "assistant" and "Noted." in text for role, text in earlier),
          f"the resumed request lacks the earlier reply: {earlier}")
    check(resumed.result == "The word was PINEAPPLE.", f"the resumed result is {resumed.result!r}")
    return f"the resumed request carried {len(messages) - 1} earlier messages of {first.session_id}"


run(flow)
