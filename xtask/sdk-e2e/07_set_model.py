"""7. set_model() then a prompt: the request carries the new model."""

from claude_agent_sdk import ClaudeSDKClient

from e2e import check, options, request_answered_by, response_within, run, the_result

FIRST, SECOND = "claude-sonnet-4-5", "claude-haiku-4-5"


async def flow() -> str:
    async with ClaudeSDKClient(options=options(model=FIRST)) as client:
        await client.query("Which model are you?")
        the_result(await response_within(client, 60, "the first prompt"))
        await client.set_model(SECOND)
        await client.query("And now?")
        result = the_result(await response_within(client, 30, "the prompt after set_model"))
    check(result.result == "The second model.", f"the second result is {result.result!r}")
    before = request_answered_by("before set_model")["body"]["model"]
    after = request_answered_by("after set_model")["body"]["model"]
    check(before == FIRST, f"the first request asked for {before!r}, not {FIRST!r}")
    check(after == SECOND, f"after set_model({SECOND!r}) the request asked for {after!r}")
    return f"requests asked for {before} then, after set_model, {after}"


run(flow)
