"""4. A PreToolUse hook callback on Bash denies: the command does not run."""

from claude_agent_sdk import HookMatcher, query

from e2e import PROJECT, check, options, run, the_result

seen: list[dict] = []


async def block_touch(hook_input, tool_use_id, context):
    seen.append(hook_input)
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "the hook blocks touch",
        }
    }


async def flow() -> str:
    marker = PROJECT / "hook-ran.txt"
    prompt = f"Run `touch {marker}` please."
    # Bash is allowed outright, so only the hook stands in the command's way.
    messages = [m async for m in query(prompt=prompt, options=options(
        allowed_tools=["Bash"],
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[block_touch])]},
    ))]
    result = the_result(messages)
    check(len(seen) == 1, f"the hook was called {len(seen)} times")
    check(seen[0].get("hook_event_name") == "PreToolUse" and seen[0].get("tool_name") == "Bash",
          f"the hook got {seen[0]}")
    check(seen[0].get("tool_input", {}).get("command") == f"touch {marker}",
          f"the hook's tool_input is {seen[0].get('tool_input')}")
    check(not marker.exists(), "the denied command ran: the marker file exists")
    check(result.result == "The hook blocked the command.",
          f"the model did not read the hook's reason: result {result.result!r}")
    return "the hook saw the Bash call and denied it; the command did not run"


run(flow)
