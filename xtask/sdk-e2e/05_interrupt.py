"""5. interrupt() during a slow reply, then a new prompt that completes (ClaudeSDKClient)."""

import asyncio
import time

from claude_agent_sdk import ClaudeSDKClient

from e2e import check, options, response_within, run, the_result, wait_for_rule

# The slow reply streams for about 50 s (130 chunks, 400 ms apart).
SLOW_REPLY_S = 50


async def flow() -> str:
    async with ClaudeSDKClient(options=options()) as client:
        await client.query("Tell me a very slow story.")
        await wait_for_rule("slow story", 30)
        await asyncio.sleep(1)  # the reply is streaming now
        started = time.monotonic()
        await client.interrupt()
        await response_within(client, 20, "after interrupt()")
        stopped_in = time.monotonic() - started
        check(stopped_in < SLOW_REPLY_S / 2,
              f"the turn ended {stopped_in:.1f} s after interrupt(), as if not interrupted")
        await client.query("Now a quick question: are you still there?")
        result = the_result(await response_within(client, 30, "the prompt after the interrupt"))
        check(result.result == "Quick answer.", f"the next prompt's result is {result.result!r}")
    return f"the slow turn ended {stopped_in:.1f} s after interrupt(); the next prompt completed"


run(flow)
