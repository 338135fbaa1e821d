"""Drives NVIDIA DataDesigner's MCP layer (data_designer.engine.mcp) against a node, as an
application using it would: run by the venv that holds data-designer (build/dd-venv), it
prints what DataDesigner saw as JSON on stdout.

    python datadesigner_driver.py http URL
    python datadesigner_driver.py stdio COMMAND [ARG]...
"""

import json
import sys
import time

from data_designer.config.mcp import LocalStdioMCPProvider, MCPProvider, ToolConfig
from data_designer.engine.mcp import io as mcp_io
from data_designer.engine.mcp.facade import MCPFacade
from data_designer.engine.model_provider import MCPProviderRegistry
from data_designer.engine.models.clients.types import AssistantMessage, ChatCompletionResponse, ToolCall
from data_designer.engine.secret_resolver import PlaintextResolver


def main() -> None:
    transport, rest = sys.argv[1], sys.argv[2:]
    if transport == "http":
        provider = MCPProvider(name="toolnode", endpoint=rest[0], provider_type="streamable_http")
    else:
        provider = LocalStdioMCPProvider(name="toolnode", command=rest[0], args=rest[1:])
    facade = MCPFacade(
        ToolConfig(tool_alias="tools", providers=["toolnode"], timeout_sec=60),
        PlaintextResolver(),
        MCPProviderRegistry(providers=[provider]),
    )
    schemas = facade.get_tool_schemas()
    names = [s["function"]["name"] for s in schemas]
    sleep = next(n for n in names if n in ("go.sleep", "go_sleep"))
    greet = next(n for n in names if n in ("c.greet", "c_greet"))
    calls = [ToolCall(id=f"c{i}", name=sleep, arguments_json='{"ms": 200}') for i in range(8)]
    calls.append(ToolCall(id="g", name=greet, arguments_json='{"name": "Ada"}'))
    started = time.monotonic()
    messages = facade.process_completion_response(ChatCompletionResponse(message=AssistantMessage(tool_calls=calls)))
    elapsed = time.monotonic() - started
    # The same call by the canonical name, as a client that mapped names itself would send it.
    canonical = mcp_io.call_tools([(provider, "c.greet", {"name": "Grace"})], timeout_sec=60)
    print(json.dumps({
        "names": names,
        "results": [m.to_dict() if hasattr(m, "to_dict") else m.__dict__ for m in messages],
        "canonical": canonical[0].content,
        "elapsed_ms": elapsed * 1000,
    }, default=str))
    mcp_io.clear_session_pool()


if __name__ == "__main__":
    main()
