"""The server: tool registry, stdio ownership and the request loop."""

from __future__ import annotations

import inspect
import itertools
import logging
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, TypeVar

from ._context import Context, InputRequired, trace_context_of
from ._errors import ToolError
from ._protocol import (
    ALL_VERSIONS,
    INPUT_METHODS,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LOG_LEVELS,
    META_CLIENT_CAPABILITIES,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    STATELESS_VERSIONS,
    SUPPORTED_VERSIONS,
    UNSUPPORTED_VERSION,
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
from ._resources import (
    Prompt,
    PromptHandler,
    Resource,
    ResourceHandler,
    ResourceReturn,
    Template,
    TemplateHandler,
    contents,
    prompt_result,
)
from ._schema import check_arguments
from ._state import StateSealer, call_digest
from ._tool import Handler, Tool, call_result, text_result
from ._views import MIME_APP, UI_SCHEME, view_meta

H = TypeVar("H", bound=Handler)
R = TypeVar("R", bound=ResourceHandler)
T = TypeVar("T", bound=TemplateHandler)
P = TypeVar("P", bound=PromptHandler)

RESOURCE_NOT_FOUND = -32002

_log = logging.getLogger("toolnode_sdk")


class Server:
    """An MCP server of tools, speaking newline-delimited JSON-RPC over stdio.

    Options:
        version: serverInfo.version.
        instructions: sent in the initialize answer when given.
        max_workers: tool calls run at the same time (default 8); more wait in line.
        page_size: tools per tools/list page (default 100).
        cache_ttl_ms: under 2026-07-28, how long a client may keep the tools/list and
            server/discover answers (default 60000: tools do not change while running).
        state_key: the key sealing the requestState of input_required results (default:
            $TOOLNODE_STATE_KEY, else random per process).
    """

    def __init__(
        self,
        name: str,
        *,
        version: str = "0.0.0",
        instructions: Optional[str] = None,
        max_workers: int = 8,
        page_size: int = 100,
        cache_ttl_ms: int = 60000,
        state_key: Optional[bytes] = None,
    ) -> None:
        if max_workers < 1 or page_size < 1:
            raise ValueError("max_workers and page_size must be at least 1")
        if cache_ttl_ms < 0:
            raise ValueError("cache_ttl_ms must not be negative")
        self.name = name
        self.version = version
        self.instructions = instructions
        self.max_workers = max_workers
        self.page_size = page_size
        self.cache_ttl_ms = cache_ttl_ms
        self._sealer = StateSealer(state_key)
        self._tools: Dict[str, Tool] = {}
        self._resources: Dict[str, Resource] = {}
        self._templates: List[Template] = []
        self._prompts: Dict[str, Prompt] = {}
        # Completion values by (reference type, prompt name or URI template, argument).
        self._completions: Dict[Tuple[str, str, str], List[str]] = {}
        self._session: Optional["_Session"] = None

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
        meta: Optional[Dict[str, Any]] = None,
        view: Optional[str] = None,
        visibility: Optional[Sequence[str]] = None,
        task_support: Optional[str] = None,
    ) -> Callable[[H], H]:
        """Register the decorated function as a tool and return it unchanged.

        The function is called as handler(args, ctx). name defaults to the
        function's name, description to its docstring, input_schema to an
        object without properties. meta is the tool's _meta. view names the ui://
        view (see Server.view) hosts show its results in, and visibility who may see
        and call it: ["model", "app"] by default, ["app"] for a tool only views call.
        task_support says whether a call may ("optional"), must ("required") or must
        not ("forbidden") run as a task.
        """
        if callable(name):
            raise TypeError(
                "@server.tool must be called: write @server.tool() or "
                '@server.tool(name="...", input_schema={...})'
            )

        tool_meta = view_meta(meta, view, visibility)

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
                    meta=tool_meta,
                    task_support=task_support,
                )
            )
            return func

        return register

    def add_tool(self, tool: Tool) -> None:
        """Register a tool built by hand; names must be unique."""
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def resource(
        self,
        uri: str,
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        mime_type: Optional[str] = None,
    ) -> Callable[[R], R]:
        """Register the decorated function as the resource at uri; it is called as
        handler(uri, ctx) and returns str (text), bytes (a blob), or contents dicts."""

        def register(func: R) -> R:
            if uri in self._resources:
                raise ValueError(f"resource {uri!r} is already registered")
            self._resources[uri] = Resource(
                uri, name or uri, func, title, description or inspect.getdoc(func), mime_type
            )
            return func

        return register

    def view(
        self,
        uri: str,
        html: str,
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        ui: Optional[Dict[str, Any]] = None,
        listed: bool = True,
    ) -> None:
        """Offer an MCP Apps view: the HTML document at uri (ui://...), read with MIME type
        text/html;profile=mcp-app and ui (csp, permissions, domain, prefersBorder) as the
        _meta.ui of its listing and contents. listed=False leaves it out of resources/list;
        hosts find it through the tools naming it (@server.tool(view=uri))."""
        if not uri.lower().startswith(UI_SCHEME) or len(uri) == len(UI_SCHEME):
            raise ValueError(f"view URI {uri!r} must begin {UI_SCHEME}")
        if uri in self._resources:
            raise ValueError(f"resource {uri!r} is already registered")
        meta = {"ui": dict(ui or {})}

        def read(read_uri: str, ctx: Context) -> ResourceReturn:
            return {"uri": uri, "mimeType": MIME_APP, "text": html, "_meta": meta}

        self._resources[uri] = Resource(
            uri, name or uri, read, title, description, MIME_APP, meta, listed
        )

    def resource_template(
        self,
        uri_template: str,
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        mime_type: Optional[str] = None,
    ) -> Callable[[T], T]:
        """Register the decorated function for the URIs matching uri_template (variables
        as {name}); it is called as handler(uri, variables, ctx)."""

        def register(func: T) -> T:
            self._templates.append(
                Template(
                    uri_template,
                    name or uri_template,
                    func,
                    title,
                    description or inspect.getdoc(func),
                    mime_type,
                )
            )
            return func

        return register

    def prompt(
        self,
        name: Optional[str] = None,
        *,
        title: Optional[str] = None,
        description: Optional[str] = None,
        arguments: Optional[List[Dict[str, Any]]] = None,
    ) -> Callable[[P], P]:
        """Register the decorated function as a prompt, called as handler(args, ctx);
        arguments lists {"name", "description", "required"} dicts."""
        if callable(name):
            raise TypeError("@server.prompt must be called: write @server.prompt()")

        def register(func: P) -> P:
            key = name if name is not None else func.__name__
            if key in self._prompts:
                raise ValueError(f"prompt {key!r} is already registered")
            self._prompts[key] = Prompt(
                key, func, title, description or inspect.getdoc(func), arguments
            )
            return func

        return register

    def complete(self, ref: str, name: str, argument: str, values: Sequence[str]) -> None:
        """Offer values for completion/complete of a prompt's argument (ref "prompt", name
        the prompt's) or a template's variable (ref "resource", name the URI template)."""
        if ref not in ("prompt", "resource"):
            raise ValueError('ref must be "prompt" or "resource"')
        self._completions[(f"ref/{ref}", name, argument)] = list(values)

    def resource_updated(self, uri: str) -> None:
        """Tell the client that resource uri changed; safe from any thread.

        A client of 2025-11-25 and older hears it if it subscribed to uri
        (resources/subscribe); a client of 2026-07-28 once on each open
        subscriptions/listen that named uri, tagged with that request's id.
        """
        session = self._session
        if session is not None:
            session._updated(uri)

    def run(self) -> None:
        """Serve stdin/stdout until stdin closes; calls in flight finish first."""
        lines, out = _claim_stdio()
        self._session = _Session(self, out)
        try:
            self._session.serve(lines)
        finally:
            self._session = None


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


class _Era:
    """How one request is served: after initialize (stateless False) or on its own under
    2026-07-28, where everything the server may know about the client is in its _meta."""

    def __init__(
        self, stateless: bool, capabilities: Message, log_threshold: Optional[int]
    ) -> None:
        self.stateless = stateless
        self.capabilities = capabilities
        # Index in LOG_LEVELS of the least severe level sent; None sends none.
        self.log_threshold = log_threshold


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
        # Requests of ours waiting for the client's answer, by id.
        self._pending: Dict[str, "_Pending"] = {}
        self._ids = itertools.count(1)
        self._input_ended = False
        self._pool = ThreadPoolExecutor(server.max_workers, thread_name_prefix="toolnode-call")
        self._subscribed: Set[str] = set()
        # Open subscriptions/listen requests: the resource URIs each agreed to, by its id.
        self._listens: Dict[RequestId, Set[str]] = {}
        self._requests: Dict[str, Callable[[Message, _Era], Message]] = {
            "initialize": self._initialize,
            "server/discover": self._discover,
            "ping": lambda params, era: {},
            "tools/list": self._list_tools,
            "logging/setLevel": self._set_level,
        }
        if server._resources or server._templates:
            self._requests.update(
                {
                    "resources/list": self._list_resources,
                    "resources/templates/list": self._list_templates,
                    "resources/subscribe": lambda params, era: self._subscribe(params, True),
                    "resources/unsubscribe": lambda params, era: self._subscribe(params, False),
                }
            )
        if server._prompts:
            self._requests["prompts/list"] = self._list_prompts
        if server._completions:
            self._requests["completion/complete"] = self._complete

    def serve(self, lines: IO[bytes]) -> None:
        try:
            for line in iter(lines.readline, b""):
                self._handle_line(line)
        except KeyboardInterrupt:
            # Nobody is waiting for the answers: stop handlers that check for cancellation.
            self._cancel_all()
        finally:
            self._end_input()
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
        try:
            self._handle_message(message)
        except Exception:
            # Whatever a client sends, this process keeps serving the others.
            _log.exception("cannot handle a message")
            request_id = as_request_id(message.get("id")) if isinstance(message, dict) else None
            self._send(error_response(request_id, INTERNAL_ERROR, "internal error"))

    def _handle_message(self, message: Any) -> None:
        if not isinstance(message, dict):
            self._send(error_response(None, INVALID_REQUEST, "Invalid Request: not a JSON object"))
            return
        has_id = "id" in message
        valid_id = as_request_id(message.get("id"))
        method = message.get("method")
        if method is None and has_id and ("result" in message or "error" in message):
            self._answered(message)
            return
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
            era = self._era(params)
            if method == "subscriptions/listen" and era.stateless:
                self._listen(valid_id, params)
                return
            if method == "tools/call":
                self._call_tool(valid_id, params, era)
                return
            if method == "prompts/get" and self._server._prompts:
                self._get_prompt(valid_id, params, era)
                return
            if method == "resources/read" and (self._server._resources or self._server._templates):
                self._read_resource(valid_id, params, era)
                return
            handler = self._requests.get(method)
            if handler is None:
                raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
            result = handler(params, era)
            if era.stateless:
                result["resultType"] = "complete"
            self._send(response(valid_id, result))
        except RpcError as exc:
            self._send(error_response(valid_id, exc.code, exc.message, exc.data))

    def _era(self, params: Message) -> _Era:
        meta = params.get("_meta")
        version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
        if version is None or version in SUPPORTED_VERSIONS:
            return _Era(False, {}, self._log_threshold)
        assert isinstance(meta, dict)
        if version not in STATELESS_VERSIONS:
            raise RpcError(
                UNSUPPORTED_VERSION,
                f"unsupported protocol version {str(version)[:64]!r}",
                {"supported": list(ALL_VERSIONS), "requested": version},
            )
        capabilities = meta.get(META_CLIENT_CAPABILITIES)
        level = meta.get(META_LOG_LEVEL)
        return _Era(
            True,
            capabilities if isinstance(capabilities, dict) else {},
            LOG_LEVELS.index(level) if level in LOG_LEVELS else None,
        )

    def _notify(self, method: str, params: Message) -> None:
        if method == "notifications/cancelled":
            request_id = as_request_id(params.get("requestId"))
            with self._inflight_lock:
                if request_id is not None and self._listens.pop(request_id, None) is not None:
                    return  # A cancelled subscription gets no answer, as the spec says.
                ctx = self._inflight.get(request_id) if request_id is not None else None
            if ctx is not None:
                ctx._cancel()
        # Other notifications (initialized, progress, roots changed) need no action.

    # Requests

    def _server_info(self) -> Message:
        return {"name": self._server.name, "version": self._server.version}

    def _capabilities(self) -> Message:
        capabilities: Message = {"tools": {"listChanged": False}, "logging": {}}
        if self._server._prompts:
            capabilities["prompts"] = {"listChanged": False}
        if self._server._resources or self._server._templates:
            capabilities["resources"] = {"subscribe": True, "listChanged": False}
        if self._server._completions:
            capabilities["completions"] = {}
        return capabilities

    def _initialize(self, params: Message, era: _Era) -> Message:
        result: Message = {
            "protocolVersion": negotiate_version(params.get("protocolVersion")),
            "capabilities": self._capabilities(),
            "serverInfo": self._server_info(),
        }
        if self._server.instructions is not None:
            result["instructions"] = self._server.instructions
        return result

    def _discover(self, params: Message, era: _Era) -> Message:
        result: Message = {
            "supportedVersions": list(ALL_VERSIONS),
            "capabilities": self._capabilities(),
            "_meta": {META_SERVER_INFO: self._server_info()},
        }
        if self._server.instructions is not None:
            result["instructions"] = self._server.instructions
        result.update(self._cache_hint())
        return result

    def _cache_hint(self) -> Message:
        return {"ttlMs": self._server.cache_ttl_ms, "cacheScope": "public"}

    def _list_tools(self, params: Message, era: _Era) -> Message:
        return self._page("tools", [t.definition() for t in self._server.tools], params, era)

    def _list_resources(self, params: Message, era: _Era) -> Message:
        listed = [r.definition() for r in self._server._resources.values() if r.listed]
        return self._page("resources", listed, params, era)

    def _list_templates(self, params: Message, era: _Era) -> Message:
        listed = [t.definition() for t in self._server._templates]
        return self._page("resourceTemplates", listed, params, era)

    def _list_prompts(self, params: Message, era: _Era) -> Message:
        listed = [p.definition() for p in self._server._prompts.values()]
        return self._page("prompts", listed, params, era)

    def _page(self, key: str, items: List[Message], params: Message, era: _Era) -> Message:
        cursor = params.get("cursor")
        start = 0
        if cursor is not None:
            # The cursor is opaque to clients; to us it is the offset of the next page.
            if not (isinstance(cursor, str) and cursor.isdecimal() and int(cursor) <= len(items)):
                raise RpcError(INVALID_PARAMS, f"invalid cursor {cursor!r}")
            start = int(cursor)
        end = start + self._server.page_size
        result: Message = {key: items[start:end]}
        if end < len(items):
            result["nextCursor"] = str(end)
        if era.stateless:
            result.update(self._cache_hint())
        return result

    def _subscribe(self, params: Message, on: bool) -> Message:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(INVALID_PARAMS, 'needs a string "uri"')
        with self._inflight_lock:
            (self._subscribed.add if on else self._subscribed.discard)(uri)
        return {}

    # A 2026-07-28 client has no resources/subscribe: it opens subscriptions/listen, naming
    # what it wants, and the request stays open, never answered while the client listens.
    # What is sent for it carries the request's id in _meta; notifications/cancelled ends it.

    def _listen(self, request_id: RequestId, params: Message) -> None:
        wanted = params.get("notifications", {})
        uris = wanted.get("resourceSubscriptions", []) if isinstance(wanted, dict) else None
        if not isinstance(uris, list):
            raise RpcError(
                INVALID_PARAMS,
                "invalid params: notifications must be an object "
                "and its resourceSubscriptions an array",
            )
        # Only the resources served are agreed to; list changes never happen (the lists are
        # fixed once the server runs), so none are.
        agreed: List[str] = []
        for uri in uris:
            if isinstance(uri, str) and uri not in agreed and self._serves(uri):
                agreed.append(uri)
        filter_: Message = {"resourceSubscriptions": agreed} if agreed else {}
        with self._inflight_lock:
            if request_id in self._listens or request_id in self._inflight:
                raise RpcError(
                    INVALID_REQUEST, f"invalid request: id {request_id!r} is already in use"
                )
            if self._input_ended:
                return
            self._listens[request_id] = set(agreed)
            # Sent under the lock, so that no update for it can go out before it.
            self._send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/subscriptions/acknowledged",
                    "params": {
                        "_meta": {META_SUBSCRIPTION_ID: request_id},
                        "notifications": filter_,
                    },
                }
            )

    def _serves(self, uri: str) -> bool:
        server = self._server
        return uri in server._resources or any(t.match(uri) is not None for t in server._templates)

    def _updated(self, uri: str) -> None:
        with self._inflight_lock:
            wanted = uri in self._subscribed
            listening = [i for i, uris in self._listens.items() if uri in uris]
        if wanted:
            self._send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/resources/updated",
                    "params": {"uri": uri},
                }
            )
        for request_id in listening:
            self._send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/resources/updated",
                    "params": {"_meta": {META_SUBSCRIPTION_ID: request_id}, "uri": uri},
                }
            )

    def _complete(self, params: Message, era: _Era) -> Message:
        ref = params.get("ref")
        argument = params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise RpcError(INVALID_PARAMS, 'completion/complete needs "ref" and "argument"')
        target = ref.get("name") if ref.get("type") == "ref/prompt" else ref.get("uri")
        values = self._server._completions.get(
            (str(ref.get("type")), str(target), str(argument.get("name")))
        )
        if values is None:
            raise RpcError(INVALID_PARAMS, f"nothing to complete for {target!r}")
        prefix = str(argument.get("value", ""))
        found = [v for v in values if v.startswith(prefix)][:100]
        return {"completion": {"values": found, "total": len(found), "hasMore": False}}

    def _set_level(self, params: Message, era: _Era) -> Message:
        level = params.get("level")
        if level not in LOG_LEVELS:
            raise RpcError(INVALID_PARAMS, f"level must be one of {', '.join(LOG_LEVELS)}")
        self._log_threshold = LOG_LEVELS.index(level)
        return {}

    def _log_enabled(self, level: str) -> bool:
        return LOG_LEVELS.index(level) >= self._log_threshold

    # Tool calls

    def _call_tool(self, request_id: RequestId, params: Message, era: _Era) -> None:
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
        self._start(
            request_id, params, era, "tools/call", name, args, lambda ctx: _invoke(tool, args, ctx)
        )

    def _get_prompt(self, request_id: RequestId, params: Message, era: _Era) -> None:
        name = params.get("name")
        prompt = self._server._prompts.get(name) if isinstance(name, str) else None
        if prompt is None:
            raise RpcError(INVALID_PARAMS, f"unknown prompt {name!r}")
        args = params.get("arguments") or {}
        if not isinstance(args, dict) or not all(isinstance(v, str) for v in args.values()):
            raise RpcError(INVALID_PARAMS, '"arguments" must map names to strings')
        for argument in prompt.arguments or []:
            if argument.get("required") and argument.get("name") not in args:
                raise RpcError(INVALID_PARAMS, f"missing required argument {argument['name']!r}")
        self._start(
            request_id,
            params,
            era,
            "prompts/get",
            prompt.name,
            args,
            lambda ctx: _call_handler(
                f"prompt {prompt.name}", prompt_result, prompt.handler, args, ctx
            ),
        )

    def _read_resource(self, request_id: RequestId, params: Message, era: _Era) -> None:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(INVALID_PARAMS, 'resources/read needs a string "uri"')
        resource = self._server._resources.get(uri)
        work: Callable[[Context], Message]
        if resource is not None:
            mime, handler = resource.mime_type, resource.handler
            work = lambda ctx: _call_handler(  # noqa: E731
                f"resource {uri}",
                lambda v: {"contents": contents(uri, mime, v)},
                handler,
                uri,
                ctx,
            )
        else:
            matches = [(t, t.match(uri)) for t in self._server._templates]
            found = [(t, v) for t, v in matches if v is not None]
            if not found:
                # 2026-07-28 moved this error to -32602.
                code = INVALID_PARAMS if era.stateless else RESOURCE_NOT_FOUND
                raise RpcError(code, f"resource {uri!r} not found", {"uri": uri})
            template, variables = found[0]
            work = lambda ctx: _call_handler(  # noqa: E731
                f"resource {uri}",
                lambda v: {"contents": contents(uri, template.mime_type, v)},
                template.handler,
                uri,
                variables,
                ctx,
            )
        self._start(request_id, params, era, "resources/read", uri, None, work)

    def _start(
        self,
        request_id: RequestId,
        params: Message,
        era: _Era,
        method: str,
        target: str,
        args: Any,
        work: Callable[[Context], Message],
    ) -> None:
        """Run work on the pool with a Context for the request, in its era."""
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        trace = trace_context_of(meta)
        if era.stateless:
            # Hashing the arguments costs more than a small call: only when a state is
            # opened or sealed.
            digest = lambda: call_digest(method, target, args)  # noqa: E731
            answers = self._restore_answers(params, digest)
            threshold = era.log_threshold

            def log_enabled(level: str) -> bool:
                return threshold is not None and LOG_LEVELS.index(level) >= threshold

            ctx = Context(
                request_id,
                as_request_id(token),
                self._send,
                log_enabled,
                lambda ctx, wanted: _answer_from(era, answers, wanted),
                lambda capability: isinstance(era.capabilities.get(capability), dict),
                trace_context=trace,
            )
            cacheable = method == "resources/read"
            run = lambda: self._run_stateless(work, ctx, digest, cacheable)  # noqa: E731
        else:
            ctx = Context(
                request_id,
                as_request_id(token),
                self._send,
                self._log_enabled,
                self._ask_client,
                trace_context=trace,
            )
            run = lambda: work(ctx)  # noqa: E731
        with self._inflight_lock:
            self._inflight[request_id] = ctx
        self._pool.submit(self._finish_call, target, run, ctx)

    def _restore_answers(self, params: Message, digest: Callable[[], str]) -> Dict[str, Message]:
        """The client's answers so far: those sealed in requestState by an earlier round and
        those of this one. Refuses what is malformed or tampered with (-32602)."""
        answers: Dict[str, Message] = {}
        state = params.get("requestState")
        if state is not None:
            if not isinstance(state, str):
                raise RpcError(INVALID_PARAMS, "requestState must be a string")
            try:
                answers.update(self._server._sealer.open(state, digest()))
            except ValueError as exc:
                raise RpcError(INVALID_PARAMS, f"invalid requestState: {exc}") from None
        responses = params.get("inputResponses")
        if responses is not None:
            if not isinstance(responses, dict) or not all(
                isinstance(v, dict) for v in responses.values()
            ):
                raise RpcError(
                    INVALID_PARAMS, "inputResponses must map each key to a result object"
                )
            answers.update(responses)
        return answers

    def _run_stateless(
        self,
        work: Callable[[Context], Message],
        ctx: Context,
        digest: Callable[[], str],
        cacheable: bool,
    ) -> Message:
        try:
            result = work(ctx)
        except InputRequired as need:
            return {
                "resultType": "input_required",
                "inputRequests": need.requests,
                "requestState": self._server._sealer.seal(digest(), need.answers),
            }
        result["resultType"] = "complete"
        if cacheable:
            result.update(self._cache_hint())
        return result

    def _finish_call(self, target: str, run: Callable[[], Message], ctx: Context) -> None:
        try:
            if ctx.cancelled:
                return
            try:
                line = encode(response(ctx.request_id, run()))
            except RpcError as exc:
                line = encode(error_response(ctx.request_id, exc.code, exc.message, exc.data))
            except (TypeError, ValueError, RecursionError) as exc:
                failure = text_result(
                    f"tool {target} returned a value that is not JSON: {exc}", is_error=True
                )
                line = encode(response(ctx.request_id, failure))
            if ctx.cancelled:
                return  # The spec: no answer for a cancelled request.
            self._write(line)
        finally:
            with self._inflight_lock:
                if self._inflight.get(ctx.request_id) is ctx:
                    del self._inflight[ctx.request_id]

    # Requests to the client (2025-11-25 and older)

    def _ask_client(self, ctx: Context, wanted: Dict[str, Message]) -> Dict[str, Message]:
        # Capabilities are not checked here: the client answers a request it cannot serve
        # with an error, and a node in between may declare less than its clients can do.
        answers: Dict[str, Message] = {}
        for key, request in wanted.items():
            answers[key] = self._request(ctx, request["method"], request["params"])
        return answers

    def _request(self, ctx: Context, method: str, params: Message) -> Message:
        request_id = f"tn-{next(self._ids)}"
        pending = _Pending()
        with self._inflight_lock:
            if self._input_ended:
                raise RpcError(INTERNAL_ERROR, f"{method}: the client's input has ended")
            self._pending[request_id] = pending
        meta = dict(params.get("_meta") or {})
        meta.update(ctx.routing_meta())
        params = {**params, "_meta": meta}
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        try:
            while not pending.done.wait(0.05):
                if ctx.cancelled:
                    self._send(
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/cancelled",
                            "params": {"requestId": request_id, "_meta": ctx.routing_meta()},
                        }
                    )
                    raise ToolError("cancelled")
        finally:
            with self._inflight_lock:
                self._pending.pop(request_id, None)
        if pending.error is not None:
            raise pending.error
        return pending.result

    def _answered(self, message: Message) -> None:
        with self._inflight_lock:
            pending = self._pending.get(str(message.get("id")))
        if pending is None:
            _log.warning("an answer to no request of ours: id %r", message.get("id"))
            return
        result = message.get("result")
        error = message.get("error")
        if isinstance(result, dict):
            pending.result = result
        else:
            text = error.get("message") if isinstance(error, dict) else None
            pending.error = ToolError(f"the client refused: {text or 'no result'}")
        pending.done.set()

    def _end_input(self) -> None:
        with self._inflight_lock:
            self._input_ended = True
            waiting = list(self._pending.values())
            # The client is gone: its subscriptions end with no answer.
            self._listens.clear()
        for pending in waiting:
            pending.error = ToolError("the client's input ended before it answered")
            pending.done.set()

    def _cancel_all(self) -> None:
        with self._inflight_lock:
            calls = list(self._inflight.values())
        for ctx in calls:
            ctx._cancel()


class _Pending:
    """A request of ours waiting for the client's answer."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: Message = {}
        self.error: Optional[BaseException] = None


def _require_capability(capabilities: Message, method: str) -> None:
    capability = INPUT_METHODS[method]
    if not isinstance(capabilities.get(capability), dict):
        raise RpcError(
            MISSING_CLIENT_CAPABILITY,
            f"{method} needs the client capability {capability!r}",
            {"requiredCapabilities": {capability: {}}},
        )


def _answer_from(
    era: _Era, answers: Dict[str, Message], wanted: Dict[str, Message]
) -> Dict[str, Message]:
    """Under 2026-07-28: the answers the client already gave, or InputRequired for the
    rest."""
    missing = {key: request for key, request in wanted.items() if key not in answers}
    if not missing:
        return {key: answers[key] for key in wanted}
    for request in missing.values():
        _require_capability(era.capabilities, request["method"])
    raise InputRequired(missing, answers)


def _call_handler(
    what: str, convert: Callable[[Any], Message], handler: Any, *args: Any
) -> Message:
    """Run a prompt or resource handler: a failure is a JSON-RPC error, not a result."""
    try:
        return convert(handler(*args))
    except (RpcError, InputRequired):
        raise
    except Exception as exc:
        _log.exception("%s failed", what)
        raise RpcError(INTERNAL_ERROR, f"{what} failed: {exc}") from None


def _invoke(tool: Tool, args: Dict[str, Any], ctx: Context) -> Message:
    """Check the arguments and run the handler; every failure becomes an isError result."""
    problem = check_arguments(tool.input_schema, args)
    if problem is not None:
        return text_result(problem, is_error=True)
    try:
        return call_result(tool.handler(args, ctx))
    except RpcError:
        raise  # the call fails as a whole, e.g. for a capability the client lacks
    except ToolError as exc:
        return text_result(str(exc), is_error=True)
    except Exception as exc:
        _log.exception("tool %s failed", tool.name)
        return text_result(f"tool {tool.name} failed: {exc}", is_error=True)
