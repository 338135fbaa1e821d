"""JSON-RPC 2.0 framing and the MCP facts the server loop relies on."""

from __future__ import annotations

import json
import math
from typing import Any, Dict, Optional, Union

from ._errors import ToolnodeError

RequestId = Union[str, int]
Message = Dict[str, Any]

# Newest first. Every version-dependent decision goes through negotiate_version,
# so adding a revision means touching this tuple and that function only.
SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_VERSION = SUPPORTED_VERSIONS[0]
# Revisions served per request, without initialize: each request names one in its _meta.
STATELESS_VERSIONS = ("2026-07-28",)
# Every revision spoken, oldest first, as server/discover lists them.
ALL_VERSIONS = tuple(reversed(SUPPORTED_VERSIONS)) + STATELESS_VERSIONS

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
# Marks what belongs to one subscriptions/listen: the id of that request.
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
# The node serves several clients with one process: what a call sends carries the id of
# the call's request under this key, so the node can tell whose it is.
META_ROUTING_KEY = "io.toolnode/request"

# Methods a server may ask the client for, and the capability each needs.
INPUT_METHODS = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}

# RFC 5424 severities, least severe first, as MCP names them.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022


class RpcError(ToolnodeError):
    """A failure answered as a JSON-RPC error object instead of a result.

    A tool handler raises it for a failure of the protocol rather than of the tool: a
    task fails with it, where a result with isError (ToolError) completes the task.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def negotiate_version(requested: object) -> str:
    """Answer the client's version when we speak it, else our latest (the spec's rule)."""
    if isinstance(requested, str) and requested in SUPPORTED_VERSIONS:
        return requested
    return LATEST_VERSION


def as_request_id(value: object) -> Optional[RequestId]:
    """value when it may serve as a request id or progress token, else None."""
    # bool is an int in Python but never a JSON-RPC id; MCP also forbids null ids.
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    # 1e400 would become inf, which no answer could carry back as JSON.
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def decode(line: bytes) -> Any:
    """Parse one line; raises RpcError(PARSE_ERROR) for anything that is not JSON or that
    cannot be held: invalid UTF-8, nesting deeper than the interpreter's recursion limit,
    numbers out of range."""
    try:
        return json.loads(
            line.decode("utf-8"), parse_constant=_reject_constant, parse_float=_finite_float
        )
    except RecursionError:
        raise RpcError(PARSE_ERROR, "Parse error: nested too deep") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise RpcError(PARSE_ERROR, f"Parse error: {exc}") from None


def encode(message: Message) -> bytes:
    """Serialize one message as a single line; json.dumps never emits a raw newline.

    A lone surrogate read from a client's \\ud800 cannot be UTF-8: such a message goes
    out with every non-ASCII character escaped instead.
    """
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(message, separators=(",", ":"), allow_nan=False).encode() + b"\n"


def dumps_compact(value: Any) -> str:
    """The JSON text mirrored beside structured content."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def response(request_id: Optional[RequestId], result: Message) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_response(
    request_id: Optional[RequestId], code: int, message: str, data: Any = None
) -> Message:
    error: Message = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def notification(method: str, params: Message) -> Message:
    return {"jsonrpc": "2.0", "method": method, "params": params}
