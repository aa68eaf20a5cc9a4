"""3. can_use_tool allows with updated_input: the Write runs with the app's content."""

from claude_agent_sdk import PermissionResultAllow, query

from e2e import PROJECT, check, options, run, the_result

asked: list[str] = []


async def rewrite(tool_name, tool_input, context):
    asked.append(tool_name)
    return PermissionResultAllow(updated_input={**tool_input, "content": "hello from the app\n"})


async def flow() -> str:
    target = PROJECT / "greeting.txt"
    prompt = f"Write {target} with a greeting."
    messages = [m async for m in query(prompt=prompt, options=options(can_use_tool=rewrite))]
    result = the_result(messages)
    check(asked == ["Write"], f"can_use_tool was asked about {asked}")
    check(target.exists(), "the allowed Write did not write the file")
    content = target.read_text()
    check(content == "hello from the app\n",
          f"the file holds {content!r}, not the app's updated content")
    check(result.result == "I wrote the file.", f"result {result.result!r}")
    return "asked once about Write; the file holds the app's content"


run(flow)
