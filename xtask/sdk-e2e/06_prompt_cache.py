"""6. A second prompt in one ClaudeSDKClient session reads >= 90% of its prompt from the cache."""

from claude_agent_sdk import ClaudeSDKClient

from e2e import check, check_cache_read, options, response_within, run, the_result


async def flow() -> str:
    async with ClaudeSDKClient(options=options()) as client:
        await client.query("First question: what is tine?")
        the_result(await response_within(client, 60, "the first prompt"))
        await client.query("Second question: does it start fast?")
        result = the_result(await response_within(client, 30, "the second prompt"))
    check(result.result == "Yes, it starts fast.", f"the second result is {result.result!r}")
    return check_cache_read("second prompt", "the second prompt")


run(flow)
