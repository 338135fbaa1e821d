import os

from anthropic import Anthropic

from toolnode_sdk.app import SyncToolnode

node = SyncToolnode(os.environ.get("TOOLNODE_URL", "http://127.0.0.1:7777/mcp"), allow=["*.greet"])
chat = node.conversation("anthropic", max_turns=5)
client = Anthropic()  # ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
messages = [{"role": "user", "content": "Greet Ada."}]
while True:
    response = client.messages.create(model="claude-sonnet-4-5", max_tokens=1024, messages=messages,
                                      tools=chat.tools())
    messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in response.content]})
    results = chat.results(response)
    if not results:
        print("".join(b.text for b in response.content if b.type == "text"))
        break
    messages += results
