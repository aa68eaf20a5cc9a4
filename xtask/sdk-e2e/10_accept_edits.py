"""10. set_permission_mode("acceptEdits") then a Write that runs without asking."""

from claude_agent_sdk import ClaudeSDKClient, PermissionResultDeny

from e2e import PROJECT, check, options, response_within, run, the_result

asked: list[str] = []


async def refuse(tool_name, tool_input, context):
    asked.append(tool_name)
    return PermissionResultDeny(message="this flow expects no question")


async def flow() -> str:
    target = PROJECT / "plan.md"
    # In the default mode this Write would ask can_use_tool (flow 2), which refuses.
    async with ClaudeSDKClient(options=options(can_use_tool=refuse)) as client:
        await client.set_permission_mode("acceptEdits")
        await client.query(f"Write {target} with a heading.")
        result = the_result(await response_within(client, 60, "the Write prompt"))
    check(asked == [], f"can_use_tool was asked about {asked} in acceptEdits")
    check(target.exists() and target.read_text() == "# Plan\n",
          f"the Write did not run: {target.read_text() if target.exists() else 'no file'!r}")
    check(result.result == "Written.", f"result {result.result!r}")
    return "the Write ran in acceptEdits without asking can_use_tool"


run(flow)
