"""Figure 3 worker: read one streamed Chat Completion from the loopback server, count events.

Modes: `di_code` (di-code's OpenAI provider, all the way to stream events), `openai_sdk` (the
official SDK's async stream of chunk objects), `httpx_lines` (bare aiter_lines + json.loads)
and `httpx_bytes` (the bytes alone). Only the stream is timed, not the imports.
"""

import asyncio
import json
import sys
import time

BODY = {"model": "bench-model", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


async def di_code(base_url: str) -> int:
    from di_code.ai import Context, Model, UserMessage
    from di_code.ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(api_key="bench-key", base_url=base_url)
    model = Model(
        id="bench-model",
        name="bench",
        provider="openai",
        api="openai-completions",
        base_url=base_url,
    )
    stream = provider.stream(model, Context(None, [UserMessage.of("hi")]))
    count = 0
    async for event in stream:
        count += 1
        if event.type == "error":
            raise SystemExit(f"di-code stream failed: {event.message.error_message}")
    return count


async def openai_sdk(base_url: str) -> int:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(api_key="bench-key", base_url=base_url, max_retries=0)
    stream = await client.chat.completions.create(
        model="bench-model", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    count = 0
    async for _chunk in stream:
        count += 1
    return count


async def httpx_lines(base_url: str) -> int:
    import httpx

    count = 0
    async with (
        httpx.AsyncClient(timeout=60) as client,
        client.stream("POST", f"{base_url}/chat/completions", json=BODY) as response,
    ):
        async for line in response.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                json.loads(line[6:])
                count += 1
    return count


async def httpx_bytes(base_url: str) -> int:
    import httpx

    count = 0
    async with (
        httpx.AsyncClient(timeout=60) as client,
        client.stream("POST", f"{base_url}/chat/completions", json=BODY) as response,
    ):
        async for piece in response.aiter_bytes():
            count += piece.count(b"\n\n")
    return count


MODES = {
    "di_code": di_code,
    "openai_sdk": openai_sdk,
    "httpx_lines": httpx_lines,
    "httpx_bytes": httpx_bytes,
}


async def main(mode: str, base_url: str) -> dict[str, float]:
    start = time.perf_counter()
    count = await MODES[mode](base_url)
    return {"events": count, "seconds": time.perf_counter() - start}


if __name__ == "__main__":
    params = json.loads(sys.argv[1])
    print(json.dumps(asyncio.run(main(params["mode"], params["base_url"]))))
