"""A bundle offering exactly what the official MCP conformance suite asks of a server,
written with the Python SDK; ../conformance/README.md tells how the suite is run."""

from __future__ import annotations

import base64
import importlib.util
import json
import struct
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import Any, Dict, List

if importlib.util.find_spec("toolnode_sdk") is None:
    # Run from a checkout where the SDK is not pip-installed: use the copy beside us.
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "sdk-python" / "src"))

from toolnode_sdk import Context, RpcError, Server, ToolError  # noqa: E402

server = Server("toolnode-conformance-python", version="0.1.0")
NO_ARGS: Dict[str, Any] = {"type": "object", "properties": {}}
WATCHED = "test://watched-resource"


def _png_red_pixel() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)  # 1x1, 8-bit RGBA
    pixels = zlib.compress(b"\x00\xff\x00\x00\xff")
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", pixels)
        + chunk(b"IEND", b"")
    )


def _wav_silence() -> bytes:
    data = b"\x00\x00"  # one silent 16-bit sample, 8 kHz mono
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    return (
        b"RIFF"
        + struct.pack("<I", 36 + len(data))
        + b"WAVEfmt "
        + struct.pack("<I", 16)
        + fmt
        + b"data"
        + struct.pack("<I", len(data))
        + data
    )


RED_PIXEL = base64.b64encode(_png_red_pixel()).decode()
SILENCE = base64.b64encode(_wav_silence()).decode()
IMAGE = {"type": "image", "data": RED_PIXEL, "mimeType": "image/png"}


def text(value: str) -> Dict[str, Any]:
    return {"type": "text", "text": value}


def embedded(uri: str, mime: str, value: str) -> Dict[str, Any]:
    return {"type": "resource", "resource": {"uri": uri, "mimeType": mime, "text": value}}


def fixed(name: str, description: str, content: List[Dict[str, Any]]) -> None:
    server.tool(name=name, description=description, input_schema=NO_ARGS)(lambda a, c: content)


fixed(
    "test_simple_text",
    "Tests simple text content response",
    [text("This is a simple text response for testing.")],
)
fixed("test_image_content", "Tests image content response", [IMAGE])
fixed(
    "test_audio_content",
    "Tests audio content response",
    [{"type": "audio", "data": SILENCE, "mimeType": "audio/wav"}],
)
fixed(
    "test_embedded_resource",
    "Tests embedded resource content response",
    [embedded("test://embedded-resource", "text/plain", "This is an embedded resource content.")],
)
fixed(
    "test_multiple_content_types",
    "Tests response with multiple content types (text, image, resource)",
    [
        text("Multiple content types test:"),
        IMAGE,
        embedded(
            "test://mixed-content-resource", "application/json", '{"test":"data","value":123}'
        ),
    ],
)


@server.tool(
    name="test_tool_with_logging",
    description="Tests tool that emits log messages during execution",
    input_schema=NO_ARGS,
)
def with_logging(args: Dict[str, Any], ctx: Context) -> str:
    for i, message in enumerate(
        ["Tool execution started", "Tool processing data", "Tool execution completed"]
    ):
        if i:
            ctx.wait_cancelled(0.05)
        ctx.log("info", message, logger="test_tool_with_logging")
    return "Tool with logging executed successfully"


# The stateless scenario's probe: log messages of a request that names no log level must
# not reach the client.
server.tool(
    name="test_logging_tool",
    description="Emits log messages during execution",
    input_schema=NO_ARGS,
)(with_logging)


@server.tool(
    name="test_tool_with_progress",
    description="Tests tool that reports progress notifications",
    input_schema=NO_ARGS,
)
def with_progress(args: Dict[str, Any], ctx: Context) -> str:
    for i, done in enumerate([0, 50, 100]):
        if i:
            ctx.wait_cancelled(0.05)
        ctx.progress(done, total=100, message=f"Completed step {done} of 100")
    return "Tool with progress executed successfully"


@server.tool(
    name="test_error_handling", description="Tests error response handling", input_schema=NO_ARGS
)
def error_handling(args: Dict[str, Any], ctx: Context) -> str:
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool(
    name="test_sampling",
    description="Tests server-initiated sampling (LLM completion request)",
    input_schema={
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "The prompt to send to the LLM"}
        },
        "required": ["prompt"],
    },
)
def sampling(args: Dict[str, Any], ctx: Context) -> str:
    answer = ctx.create_message(
        "sampling",
        {"messages": [{"role": "user", "content": text(args["prompt"])}], "maxTokens": 100},
    )
    return "LLM response: " + _text_of(answer)


def _text_of(answer: Dict[str, Any]) -> str:
    content = answer.get("content")
    blocks = content if isinstance(content, list) else [content]
    return "\n".join(
        b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"
    )


def _elicit(ctx: Context, label: str, message: str, schema: Dict[str, Any]) -> str:
    answer = ctx.elicit("elicitation", message, schema)
    content = json.dumps(answer.get("content") or {}, separators=(",", ":"))
    return f"{label}: action={answer.get('action')}, content={content}"


@server.tool(
    name="test_elicitation",
    description="Tests server-initiated elicitation (user input request)",
    input_schema={
        "type": "object",
        "properties": {
            "message": {"type": "string", "description": "The message to show the user"}
        },
        "required": ["message"],
    },
)
def elicitation(args: Dict[str, Any], ctx: Context) -> str:
    return _elicit(
        ctx,
        "User response",
        args["message"],
        {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        },
    )


@server.tool(
    name="test_elicitation_sep1034_defaults",
    description="Tests elicitation with default values per SEP-1034",
    input_schema=NO_ARGS,
)
def elicitation_defaults(args: Dict[str, Any], ctx: Context) -> str:
    return _elicit(
        ctx,
        "Elicitation completed",
        "Please review and update the form fields with defaults",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {
                    "type": "boolean",
                    "description": "Verification status",
                    "default": True,
                },
            },
            "required": [],
        },
    )


@server.tool(
    name="test_elicitation_sep1330_enums",
    description="Tests elicitation with enum schema improvements per SEP-1330",
    input_schema=NO_ARGS,
)
def elicitation_enums(args: Dict[str, Any], ctx: Context) -> str:
    titled = [
        {"const": f"value{i}", "title": t} for i, t in enumerate(["First", "Second", "Third"], 1)
    ]
    return _elicit(
        ctx,
        "Elicitation completed",
        "Please select options from the enum fields",
        {
            "type": "object",
            "properties": {
                "untitledSingle": {
                    "type": "string",
                    "description": "Select one option",
                    "enum": ["option1", "option2", "option3"],
                },
                "titledSingle": {
                    "type": "string",
                    "description": "Select one option with titles",
                    "oneOf": [dict(o, title=o["title"] + " Option") for o in titled],
                },
                "legacyEnum": {
                    "type": "string",
                    "description": "Select one option (legacy)",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "description": "Select multiple options",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "description": "Select multiple options with titles",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"anyOf": [dict(o, title=o["title"] + " Choice") for o in titled]},
                },
            },
            "required": [],
        },
    )


@server.tool(
    name="json_schema_2020_12_tool",
    description="Tool with JSON Schema 2020-12 features",
    input_schema={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
        "additionalProperties": False,
    },
)
def schema_2020_12(args: Dict[str, Any], ctx: Context) -> str:
    return "JSON Schema 2020-12 tool called with: " + json.dumps(args, separators=(",", ":"))


@server.tool(
    name="test_reconnection",
    input_schema=NO_ARGS,
    description="Tests SSE stream disconnection and client reconnection (SEP-1699)",
)
def reconnection(args: Dict[str, Any], ctx: Context) -> str:
    ctx.wait_cancelled(0.1)
    return (
        "Reconnection test completed successfully. If you received this, the client properly "
        "reconnected after stream closure."
    )


# The input_required scenarios of 2026-07-28 (SEP-2322); the same tools ask by request
# under 2025-11-25.
NAME: Dict[str, Any] = {
    "method": "elicitation/create",
    "params": {
        "message": "What is your name?",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    },
}
CAPITAL: Dict[str, Any] = {
    "method": "sampling/createMessage",
    "params": {
        "messages": [{"role": "user", "content": text("What is the capital of France?")}],
        "maxTokens": 100,
    },
}
ROOTS: Dict[str, Any] = {"method": "roots/list", "params": {}}


def _name(answer: Dict[str, Any]) -> str:
    content = answer.get("content")
    return str(content.get("name", "")) if isinstance(content, dict) else ""


def asking(name: str, questions: Dict[str, Any], answer: Any) -> None:
    server.tool(name=name, description="Asks for input (SEP-2322)", input_schema=NO_ARGS)(
        lambda args, ctx: answer(ctx.ask(questions))
    )


asking(
    "test_input_required_result_elicitation",
    {"user_name": NAME},
    lambda a: f"Hello, {_name(a['user_name'])}!",
)
asking(
    "test_input_required_result_tampered_state",
    {"user_name": NAME},
    lambda a: f"Hello, {_name(a['user_name'])}!",
)
asking(
    "test_input_required_result_sampling",
    {"capital_question": CAPITAL},
    lambda a: "LLM response: " + _text_of(a["capital_question"]),
)
asking(
    "test_input_required_result_list_roots",
    {"client_roots": ROOTS},
    lambda a: "Client roots: " + json.dumps(a["client_roots"].get("roots")),
)
asking(
    "test_input_required_result_request_state",
    {
        "confirm": {
            "method": "elicitation/create",
            "params": {
                "message": "Please confirm",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"ok": {"type": "boolean"}},
                    "required": ["ok"],
                },
            },
        }
    },
    lambda a: "state-ok: confirmed " + json.dumps(a["confirm"].get("content")),
)
asking(
    "test_input_required_result_multiple_inputs",
    {
        "user_name": NAME,
        "client_roots": ROOTS,
        "greeting": {
            "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "user", "content": text("Generate a greeting")}],
                "maxTokens": 50,
            },
        },
    },
    lambda a: f"Got {len(a)} answers: {_name(a['user_name'])}",
)
# The stateless scenario's probe: what a call asks for comes back as an input_required
# result, never as a request of its own on the stream.
asking(
    "test_streaming_elicitation",
    {"user_name": NAME},
    lambda a: f"Hello, {_name(a['user_name'])}!",
)
asking(
    "test_missing_capability",
    {"capital_question": CAPITAL},
    lambda a: "LLM response: " + _text_of(a["capital_question"]),
)


@server.tool(
    name="test_input_required_result_capabilities",
    description="Asks only what the client can answer",
    input_schema=NO_ARGS,
)
def by_capability(args: Dict[str, Any], ctx: Context) -> str:
    questions = {"user_name": NAME, "capital_question": CAPITAL}
    wanted = {k: q for k, q in questions.items() if ctx.capable(_CAPABILITY[q["method"]])}
    return f"Got {len(ctx.ask(wanted))} answers"


_CAPABILITY = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling"}


@server.tool(
    name="test_input_required_result_multi_round",
    description="Asks for input twice (SEP-2322)",
    input_schema=NO_ARGS,
)
def multi_round(args: Dict[str, Any], ctx: Context) -> str:
    name = ctx.elicit("step1", "Step 1: What is your name?", NAME["params"]["requestedSchema"])
    colour = ctx.elicit(
        "step2",
        "Step 2: What is your favorite color?",
        {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
    )
    return f"{_name(name)} likes {(colour.get('content') or {}).get('color')}"


# Resources, the template and its completion.


@server.resource(
    "test://static-text",
    name="static-text",
    title="Static Text Resource",
    description="A static text resource for testing",
    mime_type="text/plain",
)
def static_text(uri: str, ctx: Context) -> str:
    return "This is the content of the static text resource."


@server.resource(
    "test://static-binary",
    name="static-binary",
    title="Static Binary Resource",
    description="A static binary resource (image) for testing",
    mime_type="image/png",
)
def static_binary(uri: str, ctx: Context) -> bytes:
    return _png_red_pixel()


@server.resource(
    WATCHED,
    name="watched-resource",
    title="Watched Resource",
    mime_type="text/plain",
    description="A resource that is updated every 3 seconds; subscribe to hear of it",
)
def watched(uri: str, ctx: Context) -> str:
    return "Watched resource content at " + time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@server.resource_template(
    "test://template/{id}/data",
    name="template",
    title="Resource Template",
    description="A resource template with parameter substitution",
    mime_type="application/json",
)
def template_data(uri: str, variables: Dict[str, str], ctx: Context) -> str:
    return json.dumps(
        {"id": variables["id"], "templateTest": True, "data": f"Data for ID: {variables['id']}"}
    )


server.complete("resource", "test://template/{id}/data", "id", ["1", "12", "123"])


# Prompts.


@server.prompt(
    "test_simple_prompt",
    title="Simple Test Prompt",
    description="A simple prompt without arguments",
)
def simple_prompt(args: Dict[str, str], ctx: Context) -> str:
    return "This is a simple prompt for testing."


@server.prompt(
    "test_prompt_with_arguments",
    title="Prompt With Arguments",
    description="A prompt with required arguments",
    arguments=[
        {"name": "arg1", "description": "First test argument", "required": True},
        {"name": "arg2", "description": "Second test argument", "required": True},
    ],
)
def prompt_with_arguments(args: Dict[str, str], ctx: Context) -> str:
    return f"Prompt with arguments: arg1='{args['arg1']}', arg2='{args['arg2']}'"


server.complete(
    "prompt",
    "test_prompt_with_arguments",
    "arg1",
    ["paris", "park", "party", "test", "testValue1"],
)


@server.prompt(
    "test_prompt_with_embedded_resource",
    title="Prompt With Embedded Resource",
    description="A prompt that includes an embedded resource",
    arguments=[
        {"name": "resourceUri", "description": "URI of the resource to embed", "required": True}
    ],
)
def prompt_with_resource(args: Dict[str, str], ctx: Context) -> List[Dict[str, Any]]:
    return [
        {
            "role": "user",
            "content": embedded(
                args["resourceUri"], "text/plain", "Embedded resource content for testing."
            ),
        },
        {"role": "user", "content": text("Please process the embedded resource above.")},
    ]


@server.prompt(
    "test_prompt_with_image",
    title="Prompt With Image",
    description="A prompt that includes image content",
)
def prompt_with_image(args: Dict[str, str], ctx: Context) -> List[Dict[str, Any]]:
    return [
        {"role": "user", "content": IMAGE},
        {"role": "user", "content": text("Please analyze the image above.")},
    ]


@server.prompt(
    "test_input_required_result_prompt", description="A prompt that asks for input (SEP-2322)"
)
def prompt_asking(args: Dict[str, str], ctx: Context) -> str:
    answer = ctx.elicit(
        "user_context",
        "What context should the prompt use?",
        {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]},
    )
    return "Context: " + str((answer.get("content") or {}).get("context"))


# Tasks (SEP-2663): the node in front holds the tasks; each tool says whether it allows or
# requires one, reports its status and asks for input.


@server.tool(
    name="greet",
    description="Greets someone at once; never a task",
    input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    task_support="forbidden",
)
def greet(args: Dict[str, Any], ctx: Context) -> str:
    return f"Hello, {args['name']}!"


@server.tool(
    name="slow_compute",
    description="Computes for the given seconds",
    input_schema={
        "type": "object",
        "properties": {"seconds": {"type": "number"}, "label": {"type": "string"}},
    },
    task_support="optional",
)
def slow_compute(args: Dict[str, Any], ctx: Context) -> str:
    seconds, label = args.get("seconds", 0), args.get("label", "")
    ctx.status(f"computing {label}")
    if ctx.wait_cancelled(seconds):
        raise ToolError("cancelled")
    return f"computed {label} in {seconds}s"


@server.tool(
    name="failing_job",
    description="Fails as a tool after a second",
    input_schema=NO_ARGS,
    task_support="required",
)
def failing_job(args: Dict[str, Any], ctx: Context) -> str:
    ctx.status("working")
    ctx.wait_cancelled(1)
    raise ToolError("the job failed, as it always does")


@server.tool(
    name="protocol_error_job",
    description="Fails with a JSON-RPC error",
    input_schema=NO_ARGS,
    task_support="optional",
)
def protocol_error_job(args: Dict[str, Any], ctx: Context) -> str:
    ctx.status("working")
    raise RpcError(-32603, "the job broke down")


def _question(message: str, field: str, kind: str) -> Dict[str, Any]:
    """An elicitation/create asking for one field of the given JSON type."""
    return {
        "method": "elicitation/create",
        "params": {
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {field: {"type": kind}},
                "required": [field],
            },
        },
    }


CONFIRM = _question("Delete the file?", "confirm", "boolean")


@server.tool(
    name="confirm_delete",
    description="Asks to confirm a deletion",
    input_schema={"type": "object", "properties": {"filename": {"type": "string"}}},
    task_support="optional",
)
def confirm_delete(args: Dict[str, Any], ctx: Context) -> str:
    filename = args.get("filename", "")
    ctx.status(f"about to delete {filename}")
    answer = ctx.ask({"confirm": CONFIRM})["confirm"]
    content = answer.get("content")
    yes = isinstance(content, dict) and content.get("confirm") is True
    return f"{'deleted' if yes else 'kept'} {filename}"


@server.tool(
    name="multi_input",
    description="Asks two questions at once",
    input_schema=NO_ARGS,
    task_support="optional",
)
def multi_input(args: Dict[str, Any], ctx: Context) -> str:
    ctx.status("asking")
    answers = ctx.ask(
        {
            "first": _question("Input 1, please", "name", "string"),
            "second": _question("Input 2, please", "name", "string"),
        }
    )
    return f"{_name(answers['first'])} and {_name(answers['second'])}"


@server.tool(
    name="test_tool_with_task",
    description="Asks a name, then works on as a task",
    input_schema=NO_ARGS,
    task_support="required",
)
def with_task(args: Dict[str, Any], ctx: Context) -> str:
    # The question comes first, asked on the client's request: only then is there work
    # for a task.
    name = _name(ctx.ask({"user_name": NAME})["user_name"])
    ctx.status(f"greeting {name}")
    if ctx.wait_cancelled(0.2):
        raise ToolError("cancelled")
    return f"Hello, {name}!"


def _watch() -> None:
    while True:
        time.sleep(3)
        server.resource_updated(WATCHED)


if __name__ == "__main__":
    threading.Thread(target=_watch, daemon=True).start()
    server.run()
