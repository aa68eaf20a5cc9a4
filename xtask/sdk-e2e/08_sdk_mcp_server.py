"""8. An in-process SDK MCP server: the model calls its tool and reads the result.

Claude Code offers MCP tools deferred, behind ToolSearch; the scenario scripts the model for
both ways (call the tool when offered, else load it with ToolSearch first).
"""

from claude_agent_sdk import create_sdk_mcp_server, query, tool

from e2e import check, options, request_answered_by, requests, rules_seen, run, the_result

calls: list[dict] = []


@tool("add", "Add two numbers", {"a": int, "b": int})
async def add(args):
    calls.append(args)
    return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']}"}]}


async def flow() -> str:
    calc = create_sdk_mcp_server(name="calc", version="1.0.0", tools=[add])
    messages = [m async for m in query(prompt="Please add 19 and 23 with the calculator.",
                                       options=options(mcp_servers={"calc": calc},
                                                       allowed_tools=["mcp__calc__add"]))]
    result = the_result(messages)
    offered = {t["name"] for record in requests() for t in record["body"].get("tools") or []}
    check("mcp__calc__add" in offered,
          f"the requests never offered mcp__calc__add (rules seen: {rules_seen()})")
    check(calls == [{"a": 19, "b": 23}], f"the tool was called with {calls}")
    check(result.result == "19 + 23 = 42.", f"the model did not read the sum: {result.result!r}")
    request_answered_by("read the sum")
    return "the model called mcp__calc__add in the app, read sum=42"


run(flow)
