"""JSON-RPC 2.0 framing and the MCP facts the server loop relies on."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional, Union

from ._errors import ToolnodeError

RequestId = Union[str, int]
Message = Dict[str, Any]

# Newest first. Every version-dependent decision goes through negotiate_version,
# so adding a revision means touching this tuple and that function only.
SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_VERSION = SUPPORTED_VERSIONS[0]

# RFC 5424 severities, least severe first, as MCP names them.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class RpcError(ToolnodeError):
    """A failure answered as a JSON-RPC error object instead of a result."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


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


def decode(line: bytes) -> Any:
    """Parse one line; raises RpcError(PARSE_ERROR) for anything that is not JSON."""
    try:
        return json.loads(line.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise RpcError(PARSE_ERROR, f"Parse error: {exc}") from None


def encode(message: Message) -> bytes:
    """Serialize one message as a single line; json.dumps never emits a raw newline."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8") + b"\n"


def dumps_compact(value: Any) -> str:
    """The JSON text mirrored beside structured content."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def response(request_id: Optional[RequestId], result: Message) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_response(request_id: Optional[RequestId], code: int, message: str) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def notification(method: str, params: Message) -> Message:
    return {"jsonrpc": "2.0", "method": method, "params": params}
