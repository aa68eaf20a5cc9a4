"""1. initialize: protocolVersion 1, loadSession, and prompts with images and embedded context."""

from e2e import Editor, agent, initialize, run, show
from flowlib import check


async def flow() -> str:
    async with agent(Editor()) as (conn, wire, _process):
        await initialize(conn)
        reply = wire.result_of("initialize")
    check(reply.get("protocolVersion") == 1, f"protocolVersion is not 1: {show(reply)}")
    capabilities = reply.get("agentCapabilities") or {}
    check(capabilities.get("loadSession") is True,
          f"agentCapabilities.loadSession is not true: {show(capabilities)}")
    prompts = capabilities.get("promptCapabilities") or {}
    check(prompts.get("image") is True and prompts.get("embeddedContext") is True,
          f"promptCapabilities lacks image or embeddedContext: {show(prompts)}")
    info = reply.get("agentInfo") or {}
    return (f"protocolVersion 1, loadSession, image and embeddedContext prompts; "
            f"agent {info.get('name', '?')} {info.get('version', '')}, "
            f"authMethods {show(reply.get('authMethods', []), 120)}")


run(flow)
