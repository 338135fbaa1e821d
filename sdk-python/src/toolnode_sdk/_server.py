"""The server: tool registry, stdio ownership and the request loop."""

from __future__ import annotations

import inspect
import logging
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any, Callable, Dict, List, Optional, Tuple, TypeVar

from ._context import Context
from ._errors import ToolError
from ._protocol import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    LOG_LEVELS,
    METHOD_NOT_FOUND,
    Message,
    RequestId,
    RpcError,
    as_request_id,
    decode,
    encode,
    error_response,
    negotiate_version,
    response,
)
from ._schema import check_arguments
from ._tool import Handler, Tool, call_result, text_result

H = TypeVar("H", bound=Handler)

_log = logging.getLogger("toolnode_sdk")


class Server:
    """An MCP server of tools, speaking newline-delimited JSON-RPC over stdio.

    Options:
        version: serverInfo.version.
        instructions: sent in the initialize answer when given.
        max_workers: tool calls run at the same time (default 8); more wait in line.
        page_size: tools per tools/list page (default 100).
    """

    def __init__(
        self,
        name: str,
        *,
        version: str = "0.0.0",
        instructions: Optional[str] = None,
        max_workers: int = 8,
        page_size: int = 100,
    ) -> None:
        if max_workers < 1 or page_size < 1:
            raise ValueError("max_workers and page_size must be at least 1")
        self.name = name
        self.version = version
        self.instructions = instructions
        self.max_workers = max_workers
        self.page_size = page_size
        self._tools: Dict[str, Tool] = {}

    @property
    def tools(self) -> List[Tool]:
        """Registered tools, in the order tools/list shows them."""
        return list(self._tools.values())

    def tool(
        self,
        name: Optional[str] = None,
        *,
        title: Optional[str] = None,
        description: Optional[str] = None,
        input_schema: Optional[Dict[str, Any]] = None,
        output_schema: Optional[Dict[str, Any]] = None,
        annotations: Optional[Dict[str, Any]] = None,
    ) -> Callable[[H], H]:
        """Register the decorated function as a tool and return it unchanged.

        The function is called as handler(args, ctx). name defaults to the
        function's name, description to its docstring, input_schema to an
        object without properties.
        """
        if callable(name):
            raise TypeError(
                "@server.tool must be called: write @server.tool() or "
                '@server.tool(name="...", input_schema={...})'
            )

        def register(func: H) -> H:
            self.add_tool(
                Tool(
                    name=name if name is not None else func.__name__,
                    handler=func,
                    input_schema=(
                        input_schema
                        if input_schema is not None
                        else {"type": "object", "properties": {}}
                    ),
                    title=title,
                    description=description if description is not None else inspect.getdoc(func),
                    output_schema=output_schema,
                    annotations=annotations,
                )
            )
            return func

        return register

    def add_tool(self, tool: Tool) -> None:
        """Register a tool built by hand; names must be unique."""
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def run(self) -> None:
        """Serve stdin/stdout until stdin closes; calls in flight finish first."""
        lines, out = _claim_stdio()
        _Session(self, out).serve(lines)


def _claim_stdio() -> Tuple[IO[bytes], IO[bytes]]:
    """Keep stdout for protocol messages only and send everything else to stderr.

    A stray print() or a C library's printf on fd 1 would corrupt the stream, so
    the protocol gets a private copy of fd 1 and fd 1 itself becomes stderr.
    """
    sys.stdout.flush()
    try:
        out: IO[bytes] = os.fdopen(os.dup(1), "wb")
        os.dup2(2, 1)
    except OSError:
        out = sys.stdout.buffer
    sys.stdout = sys.stderr
    return sys.stdin.buffer, out


class _Session:
    """One client connection: the writer, calls in flight and the log level."""

    def __init__(self, server: Server, out: IO[bytes]) -> None:
        self._server = server
        self._out = out
        self._write_lock = threading.Lock()
        self._broken = False
        self._inflight: Dict[RequestId, Context] = {}
        self._inflight_lock = threading.Lock()
        self._log_threshold = 0
        self._pool = ThreadPoolExecutor(server.max_workers, thread_name_prefix="toolnode-call")
        self._requests: Dict[str, Callable[[Message], Message]] = {
            "initialize": self._initialize,
            "ping": lambda params: {},
            "tools/list": self._list_tools,
            "logging/setLevel": self._set_level,
        }

    def serve(self, lines: IO[bytes]) -> None:
        try:
            for line in iter(lines.readline, b""):
                self._handle_line(line)
        except KeyboardInterrupt:
            # Nobody is waiting for the answers: stop handlers that check for cancellation.
            self._cancel_all()
        finally:
            self._pool.shutdown(wait=True)

    # Output

    def _send(self, message: Message) -> None:
        self._write(encode(message))

    def _write(self, line: bytes) -> None:
        with self._write_lock:
            if self._broken:
                return
            try:
                self._out.write(line)
                self._out.flush()
            except (BrokenPipeError, ValueError):
                # Nobody reads any more; keep draining stdin until it closes too.
                self._broken = True
                _log.warning("stdout is closed; dropping further messages")

    # Input

    def _handle_line(self, line: bytes) -> None:
        line = line.strip()
        if not line:
            return
        try:
            message = decode(line)
        except RpcError as exc:
            _log.warning("ignoring a line that is not JSON: %s", exc.message)
            self._send(error_response(None, exc.code, exc.message))
            return
        self._handle_message(message)

    def _handle_message(self, message: Any) -> None:
        if not isinstance(message, dict):
            self._send(error_response(None, INVALID_REQUEST, "Invalid Request: not a JSON object"))
            return
        has_id = "id" in message
        valid_id = as_request_id(message.get("id"))
        method = message.get("method")
        if method is None and has_id and ("result" in message or "error" in message):
            return  # An answer to a request we never send: nothing to do.
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
            self._send(error_response(valid_id, INVALID_REQUEST, "Invalid Request"))
            return
        if has_id and valid_id is None:
            self._send(
                error_response(
                    None, INVALID_REQUEST, "Invalid Request: id must be a string or integer"
                )
            )
            return
        params = message.get("params", {})
        if valid_id is None:
            if isinstance(params, dict):
                self._notify(method, params)
            return
        try:
            if not isinstance(params, dict):
                raise RpcError(INVALID_PARAMS, "params must be an object")
            if method == "tools/call":
                self._call_tool(valid_id, params)
                return
            handler = self._requests.get(method)
            if handler is None:
                raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
            self._send(response(valid_id, handler(params)))
        except RpcError as exc:
            self._send(error_response(valid_id, exc.code, exc.message))

    def _notify(self, method: str, params: Message) -> None:
        if method == "notifications/cancelled":
            request_id = as_request_id(params.get("requestId"))
            with self._inflight_lock:
                ctx = self._inflight.get(request_id) if request_id is not None else None
            if ctx is not None:
                ctx._cancel()
        # Other notifications (initialized, progress, roots changed) need no action.

    # Requests

    def _initialize(self, params: Message) -> Message:
        result: Message = {
            "protocolVersion": negotiate_version(params.get("protocolVersion")),
            "capabilities": {"tools": {"listChanged": False}, "logging": {}},
            "serverInfo": {"name": self._server.name, "version": self._server.version},
        }
        if self._server.instructions is not None:
            result["instructions"] = self._server.instructions
        return result

    def _list_tools(self, params: Message) -> Message:
        tools = self._server.tools
        cursor = params.get("cursor")
        start = 0
        if cursor is not None:
            # The cursor is opaque to clients; to us it is the offset of the next page.
            if not (isinstance(cursor, str) and cursor.isdecimal() and int(cursor) <= len(tools)):
                raise RpcError(INVALID_PARAMS, f"invalid cursor {cursor!r}")
            start = int(cursor)
        end = start + self._server.page_size
        result: Message = {"tools": [tool.definition() for tool in tools[start:end]]}
        if end < len(tools):
            result["nextCursor"] = str(end)
        return result

    def _set_level(self, params: Message) -> Message:
        level = params.get("level")
        if level not in LOG_LEVELS:
            raise RpcError(INVALID_PARAMS, f"level must be one of {', '.join(LOG_LEVELS)}")
        self._log_threshold = LOG_LEVELS.index(level)
        return {}

    def _log_enabled(self, level: str) -> bool:
        return LOG_LEVELS.index(level) >= self._log_threshold

    # Tool calls

    def _call_tool(self, request_id: RequestId, params: Message) -> None:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, 'tools/call needs a string "name"')
        tool = self._server._tools.get(name)
        if tool is None:
            raise RpcError(INVALID_PARAMS, f'unknown tool "{name}"')
        args = params.get("arguments")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise RpcError(INVALID_PARAMS, '"arguments" must be an object')
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        ctx = Context(request_id, as_request_id(token), self._send, self._log_enabled)
        with self._inflight_lock:
            self._inflight[request_id] = ctx
        self._pool.submit(self._run_call, tool, args, ctx)

    def _run_call(self, tool: Tool, args: Dict[str, Any], ctx: Context) -> None:
        try:
            if ctx.cancelled:
                return
            result = _invoke(tool, args, ctx)
            if ctx.cancelled:
                return  # The spec: no answer for a cancelled request.
            try:
                line = encode(response(ctx.request_id, result))
            except (TypeError, ValueError) as exc:
                failure = text_result(
                    f"tool {tool.name} returned a value that is not JSON: {exc}", is_error=True
                )
                line = encode(response(ctx.request_id, failure))
            self._write(line)
        finally:
            with self._inflight_lock:
                if self._inflight.get(ctx.request_id) is ctx:
                    del self._inflight[ctx.request_id]

    def _cancel_all(self) -> None:
        with self._inflight_lock:
            calls = list(self._inflight.values())
        for ctx in calls:
            ctx._cancel()


def _invoke(tool: Tool, args: Dict[str, Any], ctx: Context) -> Message:
    """Check the arguments and run the handler; every failure becomes an isError result."""
    problem = check_arguments(tool.input_schema, args)
    if problem is not None:
        return text_result(problem, is_error=True)
    try:
        return call_result(tool.handler(args, ctx))
    except ToolError as exc:
        return text_result(str(exc), is_error=True)
    except Exception as exc:
        _log.exception("tool %s failed", tool.name)
        return text_result(f"tool {tool.name} failed: {exc}", is_error=True)
