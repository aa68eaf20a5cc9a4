"""1. query() with an allowed Read; the result carries usage and cost."""

from claude_agent_sdk import query

from e2e import PROJECT, check, options, run, the_result


async def flow() -> str:
    (PROJECT / "notes.txt").write_text("the marker is MARKER-7431\n")
    prompt = f"Read the file {PROJECT / 'notes.txt'} and tell me the marker."
    messages = [m async for m in query(prompt=prompt, options=options(allowed_tools=["Read"]))]
    result = the_result(messages)
    check(result.result == "The file holds MARKER-7431.",
          f"the model never saw the file's text: result {result.result!r}")
    check(result.total_cost_usd and result.total_cost_usd > 0,
          f"total_cost_usd is {result.total_cost_usd!r}")
    usage = result.usage or {}
    check(usage.get("output_tokens", 0) > 0, f"usage has no output_tokens: {usage}")
    prompt_tokens = sum(usage.get(k, 0) for k in
                        ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    check(prompt_tokens > 0, f"usage counts no prompt tokens: {usage}")
    check(result.num_turns >= 2, f"num_turns is {result.num_turns} for a Read and an answer")
    check(result.session_id, "the result has no session_id")
    return (f"${result.total_cost_usd:.4f}, {result.num_turns} turns, {prompt_tokens} prompt "
            f"tokens, session {result.session_id}")


run(flow)
