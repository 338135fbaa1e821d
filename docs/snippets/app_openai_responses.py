import os

from openai import OpenAI

from toolnode_sdk.app import SyncToolnode

node = SyncToolnode(os.environ.get("TOOLNODE_URL", "http://127.0.0.1:7777/mcp"), allow=["*.greet"])
chat = node.conversation("openai-responses", strict=True, max_turns=5)
client = OpenAI()
items = [{"role": "user", "content": "Greet Ada."}]
while True:
    response = client.responses.create(model="gpt-5", input=items, tools=chat.tools())
    items += [item.model_dump(exclude_none=True) for item in response.output]
    results = chat.results(response)
    if not results:
        print(response.output_text)
        break
    items += results
