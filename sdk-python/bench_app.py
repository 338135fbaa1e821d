"""What toolnode_sdk.app adds to a tool call, for `make bench` (runtime/cmd/bench/app.go).

Calls go.greet on the node at URL one at a time, with the official `mcp` client directly and
as a model's tool call through the library (name mapped back, call run, result made a Chat
Completions tool message), taking turns, and prints the medians as JSON.

    python bench_app.py URL SECONDS ROUNDS
"""

import asyncio
import json
import sys
import time

from mcp import Client
from mcp_types import Implementation

from toolnode_sdk.app import Call, Toolnode, result_messages


async def measure(call, seconds):
    lat = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.perf_counter()
        await call()
        lat.append(time.perf_counter() - t)
    lat.sort()
    return {"perSec": len(lat) / seconds, "p50": lat[len(lat) // 2] * 1e6, "p99": lat[len(lat) * 99 // 100] * 1e6}


def median(rounds, key):
    return sorted(r[key] for r in rounds)[len(rounds) // 2]


async def main() -> None:
    url, seconds, rounds = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    node = Toolnode(url)
    name = (await node.definitions("openai")).names.provider_name("go.greet")

    # Named, as any application should be: a client that leaves the SDK's default name is
    # shown underscore names (the node's --names auto), and calls by the dotted name would
    # make the SDK list the tools again before each call.
    async with Client(url, client_info=Implementation(name="bench", version="1")) as client:
        # As an application hands the model its tools: list them once (the SDK lists again
        # before every call of a tool it has not seen listed).
        cursor = None
        while True:
            page = await client.list_tools(cursor=cursor)
            if not (cursor := page.next_cursor):
                break

        async def direct():
            res = await client.call_tool("go.greet", {"name": "bench"})
            assert not res.is_error

        async def library():
            (out,) = await node.run("openai", [Call("call_1", name, {"name": "bench"})])
            assert out.error is None, out.error
            result_messages("openai", [out])

        for call in (direct, library):
            for _ in range(200):
                await call()
        got = {"direct": [], "library": []}
        for _ in range(rounds):
            got["direct"].append(await measure(direct, seconds))
            got["library"].append(await measure(library, seconds))
    await node.close()
    print(json.dumps({k.capitalize(): {m: median(v, m) for m in ("perSec", "p50", "p99")} for k, v in got.items()}))


asyncio.run(main())
