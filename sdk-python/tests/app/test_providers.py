"""The library with each model API's official Python SDK, against a loopback server that
answers as the API does: the SDK's own types take the tools and the results, the calls
come back, run through a real node, and go back in the API's format."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from conftest import RESPONSES, FakeAPI, Node
from pydantic import TypeAdapter
from rules import check

from toolnode_sdk.app import SyncToolnode, Toolnode

ALLOW = ["c.greet", "node-lamp.*", "test_image_content", "go.sleep", "meos.add_int_tint"]


def calls_for(defs: Any, meos: bool) -> list[tuple[str, str, dict[str, Any]]]:
    """The completion's calls, by the names the API was given."""
    n = defs.names.provider_name
    calls = [
        ("call_1", n("c.greet"), {"name": "Ada"}),
        ("call_2", n("node-lamp.status"), {}),
        ("call_3", n("test_image_content"), {}),
    ]
    if meos:
        calls.append(("call_4", n("meos.add_int_tint"), {"i": 2, "tnumber": "{1@2001-01-01, 2@2001-01-02}"}))
    return calls


def script(calls: list[tuple[str, str, dict[str, Any]]]) -> Any:
    def answer(api: str, req: dict[str, Any]) -> dict[str, Any]:
        make = RESPONSES[api]
        first = {"openai": lambda: len(req["messages"]) == 1, "openai-responses": lambda: len(req["input"]) == 1,
                 "anthropic": lambda: len(req["messages"]) == 1, "gemini": lambda: len(req["contents"]) == 1}[api]()
        return make(calls) if first else make(None, text="done")

    return answer


def image_data(node_url: str) -> tuple[str, str]:
    res = SyncToolnode(node_url).call("test_image_content")
    img = next(c for c in res["content"] if c["type"] == "image")
    return img["mimeType"], img["data"]


def test_openai_chat_completions(node: Node, fake_api: FakeAPI) -> None:
    from openai import OpenAI
    from openai.types.chat import (
        ChatCompletionFunctionToolParam,
        ChatCompletionMessageParam,
    )

    has_meos = "meos.add_int_tint" in {t["name"] for t in SyncToolnode(node.url).list_tools()}
    tn = SyncToolnode(node.url, allow=ALLOW)
    conv = tn.conversation("openai")
    tools = conv.tools()
    TypeAdapter(list[ChatCompletionFunctionToolParam]).validate_python(tools)
    assert check("openai", tools) == {}
    calls = calls_for(tn.definitions("openai"), has_meos)
    fake_api.script = script(calls)

    client = OpenAI(api_key="test", base_url=fake_api.url + "/v1", max_retries=0)
    messages: list[Any] = [{"role": "user", "content": "greet Ada, check the lamp, show an image"}]
    response = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
    assert [c.function.name for c in response.choices[0].message.tool_calls] == [c[1] for c in calls]
    messages.append(response.choices[0].message.model_dump(exclude_none=True))
    results = conv.results(response)
    TypeAdapter(list[ChatCompletionMessageParam]).validate_python(results)
    messages += results
    final = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
    assert final.choices[0].message.content == "done"

    sent = fake_api.requests[1][1]["messages"]
    tool_msgs = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
    assert tool_msgs["call_1"] == "Hello, Ada!"
    assert json.loads(tool_msgs["call_2"]) == {"on": False} or json.loads(tool_msgs["call_2"]) == {"on": True}
    if has_meos:
        assert "3@2001-01-01" in tool_msgs["call_4"]
    mime, data = image_data(node.url)
    pictures = [m for m in sent if m["role"] == "user" and isinstance(m["content"], list)]
    assert pictures, "the image went back in a user message"
    urls = [p["image_url"]["url"] for p in pictures[0]["content"] if p["type"] == "image_url"]
    assert urls == [f"data:{mime};base64,{data}"]
    assert fake_api.requests[0][1]["tools"] == tools


def test_openai_responses(node: Node, fake_api: FakeAPI) -> None:
    from openai import OpenAI
    from openai.types.responses import FunctionToolParam, ResponseInputItemParam

    tn = SyncToolnode(node.url, allow=ALLOW)
    conv = tn.conversation("openai-responses", strict=True)
    tools = conv.tools()
    TypeAdapter(list[FunctionToolParam]).validate_python(tools)
    assert check("openai-responses", tools) == {}
    calls = calls_for(tn.definitions("openai-responses", strict=True), False)
    fake_api.script = script(calls)

    client = OpenAI(api_key="test", base_url=fake_api.url + "/v1", max_retries=0)
    items: list[Any] = [{"role": "user", "content": "greet Ada"}]
    response = client.responses.create(model="gpt-test", input=items, tools=tools)
    items += [o.model_dump(exclude_none=True) for o in response.output]
    results = conv.results(response)
    TypeAdapter(list[ResponseInputItemParam]).validate_python(results)
    items += results
    final = client.responses.create(model="gpt-test", input=items, tools=tools)
    assert final.output_text == "done"

    sent = fake_api.requests[1][1]["input"]
    outputs = {i["call_id"]: i["output"] for i in sent if i.get("type") == "function_call_output"}
    assert outputs["call_1"] == "Hello, Ada!"
    mime, data = image_data(node.url)
    assert {"type": "input_image", "image_url": f"data:{mime};base64,{data}"} in outputs["call_3"]


def test_anthropic_messages(node: Node, fake_api: FakeAPI) -> None:
    from anthropic import Anthropic
    from anthropic.types import MessageParam, ToolParam

    has_meos = "meos.add_int_tint" in {t["name"] for t in SyncToolnode(node.url).list_tools()}
    tn = SyncToolnode(node.url, allow=ALLOW)
    conv = tn.conversation("anthropic")
    tools = conv.tools()
    TypeAdapter(list[ToolParam]).validate_python(tools)
    assert check("anthropic", tools) == {}
    calls = calls_for(tn.definitions("anthropic"), has_meos)
    fake_api.script = script(calls)

    client = Anthropic(api_key="test", base_url=fake_api.url, max_retries=0)
    messages: list[Any] = [{"role": "user", "content": "greet Ada"}]
    response = client.messages.create(model="claude-test", max_tokens=100, messages=messages, tools=tools)
    messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in response.content]})
    results = conv.results(response)
    TypeAdapter(list[MessageParam]).validate_python(results)
    messages += results
    final = client.messages.create(model="claude-test", max_tokens=100, messages=messages, tools=tools)
    assert final.content[0].text == "done"

    blocks = {b["tool_use_id"]: b for b in fake_api.requests[1][1]["messages"][-1]["content"]}
    assert blocks["call_1"]["content"] == [{"type": "text", "text": "Hello, Ada!"}]
    mime, data = image_data(node.url)
    image = {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}
    assert image in blocks["call_3"]["content"]
    if has_meos:
        assert "3@2001-01-01" in blocks["call_4"]["content"][0]["text"]


def test_gemini(node: Node, fake_api: FakeAPI) -> None:
    from google import genai
    from google.genai import types

    tn = SyncToolnode(node.url, allow=ALLOW)
    conv = tn.conversation("gemini")
    tools = conv.tools()
    sdk_tools = [types.Tool.model_validate(t) for t in tools]
    assert check("gemini", tools) == {}
    calls = calls_for(tn.definitions("gemini"), False)
    fake_api.script = script(calls)

    client = genai.Client(api_key="test", http_options=types.HttpOptions(base_url=fake_api.url))
    config = types.GenerateContentConfig(
        tools=sdk_tools, automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)
    )
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text="greet Ada")])]
    response = client.models.generate_content(model="gemini-test", contents=contents, config=config)
    assert [c.name for c in response.function_calls or []] == [c[1] for c in calls]
    contents.append(response.candidates[0].content)
    contents += [types.Content.model_validate(m) for m in conv.results(response)]
    final = client.models.generate_content(model="gemini-test", contents=contents, config=config)
    assert final.text == "done"

    wire = fake_api.requests[0][1]["tools"][0]["functionDeclarations"]
    assert {d["name"] for d in wire} == {d["name"] for d in tools[0]["functionDeclarations"]}
    parts = fake_api.requests[1][1]["contents"][-1]["parts"]
    by_id = {p["functionResponse"]["id"]: p["functionResponse"] for p in parts}
    assert by_id["call_1"]["response"] == {"output": "Hello, Ada!"}
    assert by_id["call_1"]["name"] == calls[0][1]
    assert by_id["call_2"]["response"]["output"] in ({"on": False}, {"on": True})
    mime, data = image_data(node.url)
    # The SDK writes this part in its own spelling (inline_data, URL-safe base64): compare what it carries.
    (part,) = by_id["call_3"]["parts"]
    blob = part.get("inlineData") or part.get("inline_data")
    assert (blob.get("mimeType") or blob.get("mime_type")) == mime
    assert base64.urlsafe_b64decode(blob["data"]) == base64.b64decode(data) != b""


@pytest.mark.parametrize("fmt", ["openai", "openai-responses", "anthropic", "gemini"])
def test_errors_reach_the_model_as_tool_errors(node: Node, fmt: str) -> None:
    """An unknown name, bad arguments, a tool's own failure: each says whether it may have acted."""
    import asyncio

    async def run() -> list[Any]:
        tn = Toolnode(node.url, allow=["c.greet", "test_error_handling"])
        defs = await tn.definitions(fmt)
        from toolnode_sdk.app import Call

        return await tn.run(fmt, [
            Call("e1", "no_such_tool", {}),
            Call("e2", defs.names.provider_name("c.greet"), bad_arguments="the arguments are not JSON"),
            Call("e3", defs.names.provider_name("test_error_handling"), {}),
            Call("e4", "go_greet", {"name": "x"}),
        ])

    outcomes = asyncio.run(run())
    kinds = [(o.error or {}).get("kind") for o in outcomes]
    dispatched = [(o.error or {}).get("dispatched") for o in outcomes]
    assert kinds == ["unknown_tool", "invalid_arguments", "failed", "forbidden"]
    assert dispatched == [False, False, True, False]
