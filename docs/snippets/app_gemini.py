import os

from google import genai
from google.genai import types

from toolnode_sdk.app import SyncToolnode

node = SyncToolnode(os.environ.get("TOOLNODE_URL", "http://127.0.0.1:7777/mcp"), allow=["*.greet"])
chat = node.conversation("gemini", max_turns=5)
client = genai.Client()  # GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL
config = types.GenerateContentConfig(
    tools=chat.tools(), automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)
)
contents = [types.Content(role="user", parts=[types.Part(text="Greet Ada.")])]
while True:
    response = client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=config)
    contents.append(response.candidates[0].content)
    results = chat.results(response)
    if not results:
        print(response.text)
        break
    contents += [types.Content.model_validate(m) for m in results]
