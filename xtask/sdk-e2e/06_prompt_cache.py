"""6. A second prompt in one ClaudeSDKClient session reads >= 90% of its prompt from the cache."""

from claude_agent_sdk import ClaudeSDKClient

from e2e import check, options, request_answered_by, response_within, run, the_result


async def flow() -> str:
    async with ClaudeSDKClient(options=options()) as client:
        await client.query("First question: what is tine?")
        the_result(await response_within(client, 60, "the first prompt"))
        await client.query("Second question: does it start fast?")
        result = the_result(await response_within(client, 30, "the second prompt"))
    check(result.result == "Yes, it starts fast.", f"the second result is {result.result!r}")
    # The simulator's own accounting of the second prompt's request.
    usage = request_answered_by("second prompt")["usage"]
    read = usage["cache_read_input_tokens"]
    total = read + usage["cache_creation_input_tokens"] + usage["input_tokens"]
    share = read / total if total else 0.0
    check(share >= 0.9, f"the second prompt read {read} of {total} prompt tokens from the cache "
                        f"({share:.0%}, want >= 90%)")
    return f"the second prompt read {read} of {total} prompt tokens from the cache ({share:.1%})"


run(flow)
