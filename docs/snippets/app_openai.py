import asyncio
import os

from openai import AsyncOpenAI

from toolnode_sdk.app import Toolnode


async def main() -> None:
    node = Toolnode(os.environ.get("TOOLNODE_URL", "http://127.0.0.1:7777/mcp"), allow=["*.greet", "meos.*"])
    chat = node.conversation("openai", max_turns=5)
    client = AsyncOpenAI()  # OPENAI_API_KEY, OPENAI_BASE_URL
    messages = [{"role": "user", "content": "Greet Ada."}]
    while True:
        response = await client.chat.completions.create(model="gpt-5", messages=messages, tools=await chat.tools())
        message = response.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        results = await chat.results(response)  # every call of the response, run at once
        if not results:
            print(message.content)
            return
        messages += results


asyncio.run(main())
