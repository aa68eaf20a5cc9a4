"""2. can_use_tool denies a Write: the model reads the message, the file is not written."""

from claude_agent_sdk import PermissionResultDeny, query

from e2e import PROJECT, check, options, run, the_result

asked: list[tuple[str, dict]] = []


async def deny(tool_name, tool_input, context):
    asked.append((tool_name, tool_input))
    return PermissionResultDeny(message="the app says no: secrets stay out")


async def flow() -> str:
    target = PROJECT / "secret.txt"
    prompt = f"Write {target} with the words 'not allowed'."
    messages = [m async for m in query(prompt=prompt, options=options(can_use_tool=deny))]
    result = the_result(messages)
    check([name for name, _ in asked] == ["Write"], f"can_use_tool was asked about {asked}")
    check(asked[0][1].get("file_path") == str(target), f"it was asked with {asked[0][1]}")
    check(not target.exists(), "the denied Write wrote the file")
    check(result.result == "The app refused the write: secrets stay out.",
          f"the model did not read the denial: result {result.result!r}")
    return "asked once about Write, denied; the model read the message; no file"


run(flow)
