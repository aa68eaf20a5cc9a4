"""11. enable_file_checkpointing, three prompts with Write and Bash, rewind_files to the second
prompt's user message: what Write and Bash changed goes back, the person's edit stays, the
session goes on."""

from claude_agent_sdk import ClaudeSDKClient, UserMessage

from e2e import PROJECT, check, options, response_within, run, the_result


async def flow() -> str:
    a = PROJECT / "a.txt"
    (PROJECT / "gone.txt").write_text("keep me\n")
    (PROJECT / "old.txt").write_text("old place\n")
    (PROJECT / "untouched.txt").write_text("original\n")
    opts = options(
        enable_file_checkpointing=True,
        allowed_tools=["Write", "Bash"],
        extra_args={"replay-user-messages": None},
    )
    uuids: list[str] = []
    async with ClaudeSDKClient(options=opts) as client:
        for n, prompt in enumerate([f"Prompt one: write {a} now", f"Prompt two: change {a} now", f"Prompt three: write {a} now"]):
            await client.query(prompt)
            messages = await response_within(client, 60, f"prompt {n + 1}")
            replayed = [m.uuid for m in messages if isinstance(m, UserMessage) and getattr(m, "uuid", None)]
            check(replayed, f"prompt {n + 1}: no UserMessage with a uuid came back")
            uuids.append(replayed[0])
            the_result(messages)
            if n == 0:
                (PROJECT / "untouched.txt").write_text("the person's edit\n")
        check(a.read_text() == "three\n", f"a.txt before the rewind: {a.read_text()!r}")
        await client.rewind_files(uuids[1])
        checks = {
            "Write's change restored": a.read_text() == "one\n",
            "Bash's new file gone": not (PROJECT / "new.txt").exists(),
            "Bash's deleted file back": (PROJECT / "gone.txt").exists() and (PROJECT / "gone.txt").read_text() == "keep me\n",
            "Bash's moved file back": (PROJECT / "old.txt").exists() and not (PROJECT / "moved.txt").exists(),
            "the person's edit kept": (PROJECT / "untouched.txt").read_text() == "the person's edit\n",
        }
        await client.query(f"Prompt three: write {a} now")
        result = the_result(await response_within(client, 60, "the prompt after the rewind"))
        checks["the session goes on"] = result.subtype == "success" and a.read_text() == "three\n"
    failed = [name for name, ok in checks.items() if not ok]
    check(not failed, f"failed: {failed}")
    return f"{len(checks) + 1} of {len(checks) + 1}: " + ", ".join(checks)


run(flow)
