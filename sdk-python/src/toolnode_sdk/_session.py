"""One client connection over stdio: reading messages and answering what needs no
handler; calls, subscriptions and requests to the client are the jobs of their own
modules."""

from __future__ import annotations

import logging
from typing import IO, TYPE_CHECKING, Any, Callable, Dict, List

from ._calls import Calls, handler_work, tool_work
from ._client import ClientRequests
from ._era import CallRequest, Era, SessionEra, era_of
from ._output import Writer
from ._protocol import (
    ALL_VERSIONS,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LOG_LEVELS,
    META_SERVER_INFO,
    METHOD_NOT_FOUND,
    Message,
    RequestId,
    RpcError,
    as_request_id,
    decode,
    error_response,
    negotiate_version,
    response,
)
from ._resources import contents, prompt_result
from ._skills import SKILLS_EXTENSION
from ._subscriptions import Subscriptions

if TYPE_CHECKING:
    from ._server import Server

_log = logging.getLogger("toolnode_sdk")


class Session:
    """Serves one client: reads its messages, dispatches them and answers."""

    def __init__(self, server: "Server", out: IO[bytes]) -> None:
        self._server = server
        self._writer = Writer(out)
        send = self._writer.send
        self._log_threshold = 0
        self._client = ClientRequests(send)
        self._calls = Calls(self._writer, server.max_workers)
        self._subscriptions = Subscriptions(send, self._serves, self._calls.in_use)
        self._era = SessionEra(self._log_enabled, self._client.ask)
        subs = self._subscriptions
        self._requests: Dict[str, Callable[[Message, Era], Message]] = {
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
                    "resources/subscribe": lambda params, era: subs.subscribe(params, True),
                    "resources/unsubscribe": lambda params, era: subs.subscribe(params, False),
                }
            )
        if server._prompts:
            self._requests["prompts/list"] = self._list_prompts
        if server._completions:
            self._requests["completion/complete"] = self._complete
        if server._skills:
            self._requests["skills/list"] = self._list_skills
            self._requests["skills/get"] = self._get_skill
        # Requests that start a call, answered once its handler returns.
        self._starts: Dict[str, Callable[[RequestId, Message, Era], None]] = {
            "tools/call": self._call_tool
        }
        if server._prompts:
            self._starts["prompts/get"] = self._get_prompt
        if server._resources or server._templates:
            self._starts["resources/read"] = self._read_resource

    def serve(self, lines: IO[bytes]) -> None:
        """Read messages until lines end; calls in flight finish first."""
        try:
            for line in iter(lines.readline, b""):
                self._handle_line(line)
        except KeyboardInterrupt:
            # Nobody is waiting for the answers: stop handlers that check for cancellation.
            self._calls.cancel_all()
        finally:
            self._client.end()
            self._subscriptions.end()
            self._calls.close()

    def updated(self, uri: str) -> None:
        """Resource uri changed: tell whoever subscribed."""
        self._subscriptions.updated(uri)

    # Input

    def _handle_line(self, line: bytes) -> None:
        line = line.strip()
        if not line:
            return
        try:
            message = decode(line)
        except RpcError as exc:
            _log.warning("ignoring a line that is not JSON: %s", exc.message)
            self._writer.send(error_response(None, exc.code, exc.message))
            return
        try:
            self._handle_message(message)
        except Exception:
            # Whatever a client sends, this process keeps serving the others.
            _log.exception("cannot handle a message")
            request_id = as_request_id(message.get("id")) if isinstance(message, dict) else None
            self._writer.send(error_response(request_id, INTERNAL_ERROR, "internal error"))

    def _handle_message(self, message: Any) -> None:
        send = self._writer.send
        if not isinstance(message, dict):
            send(error_response(None, INVALID_REQUEST, "Invalid Request: not a JSON object"))
            return
        has_id = "id" in message
        valid_id = as_request_id(message.get("id"))
        method = message.get("method")
        if method is None and has_id and ("result" in message or "error" in message):
            self._client.answered(message)
            return
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
            send(error_response(valid_id, INVALID_REQUEST, "Invalid Request"))
            return
        if has_id and valid_id is None:
            send(
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
            self._request(valid_id, method, params)
        except RpcError as exc:
            send(error_response(valid_id, exc.code, exc.message, exc.data))

    def _request(self, request_id: RequestId, method: str, params: Message) -> None:
        era = era_of(params, self._era, self._server._sealer)
        if method == "subscriptions/listen" and era.listens:
            self._subscriptions.listen(request_id, params)
            return
        start = self._starts.get(method)
        if start is not None:
            start(request_id, params, era)
            return
        handler = self._requests.get(method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
        self._writer.send(response(request_id, era.answer(handler(params, era))))

    def _notify(self, method: str, params: Message) -> None:
        if method == "notifications/cancelled":
            request_id = as_request_id(params.get("requestId"))
            if request_id is None or self._subscriptions.unlisten(request_id):
                return  # A cancelled subscription gets no answer, as the spec says.
            self._calls.cancel(request_id)
        # Other notifications (initialized, progress, roots changed) need no action.

    # Requests answered at once

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
        if self._server._skills:
            capabilities["extensions"] = {SKILLS_EXTENSION: {}}
        return capabilities

    def _initialize(self, params: Message, era: Era) -> Message:
        result: Message = {
            "protocolVersion": negotiate_version(params.get("protocolVersion")),
            "capabilities": self._capabilities(),
            "serverInfo": self._server_info(),
        }
        if self._server.instructions is not None:
            result["instructions"] = self._server.instructions
        return result

    def _discover(self, params: Message, era: Era) -> Message:
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

    def _list_tools(self, params: Message, era: Era) -> Message:
        return self._page("tools", [t.definition() for t in self._server.tools], params, era)

    def _list_resources(self, params: Message, era: Era) -> Message:
        listed = [r.definition() for r in self._server._resources.values() if r.listed]
        return self._page("resources", listed, params, era)

    def _list_templates(self, params: Message, era: Era) -> Message:
        listed = [t.definition() for t in self._server._templates]
        return self._page("resourceTemplates", listed, params, era)

    def _list_skills(self, params: Message, era: Era) -> Message:
        return self._page("skills", [s.entry for s in self._server._skills], params, era)

    def _get_skill(self, params: Message, era: Era) -> Message:
        uri = params.get("uri")
        for s in self._server._skills:
            if s.uri == uri:
                return era.answer({"skill": s.entry}, cache_hint=self._cache_hint())
        raise RpcError(INVALID_PARAMS, f"no skill is served at {uri}")

    def _list_prompts(self, params: Message, era: Era) -> Message:
        listed = [p.definition() for p in self._server._prompts.values()]
        return self._page("prompts", listed, params, era)

    def _page(self, key: str, items: List[Message], params: Message, era: Era) -> Message:
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
        # The era adds the hint where its answers carry one (2026-07-28).
        return era.answer(result, cache_hint=self._cache_hint())

    def _serves(self, uri: str) -> bool:
        server = self._server
        return uri in server._resources or any(t.match(uri) is not None for t in server._templates)

    def _complete(self, params: Message, era: Era) -> Message:
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

    def _set_level(self, params: Message, era: Era) -> Message:
        level = params.get("level")
        if level not in LOG_LEVELS:
            raise RpcError(INVALID_PARAMS, f"level must be one of {', '.join(LOG_LEVELS)}")
        self._log_threshold = LOG_LEVELS.index(level)
        return {}

    def _log_enabled(self, level: str) -> bool:
        return LOG_LEVELS.index(level) >= self._log_threshold

    # Requests that start a call

    def _call_tool(self, request_id: RequestId, params: Message, era: Era) -> None:
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
        request = CallRequest(request_id, params, self._writer.send, "tools/call", name, args)
        call = era.call(request)
        self._calls.start(call, name, tool.handler, tool_work(tool, args))

    def _get_prompt(self, request_id: RequestId, params: Message, era: Era) -> None:
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
        call = era.call(
            CallRequest(request_id, params, self._writer.send, "prompts/get", prompt.name, args)
        )
        work = handler_work(f"prompt {prompt.name}", prompt_result, prompt.handler, args)
        self._calls.start(call, prompt.name, prompt.handler, work)

    def _read_resource(self, request_id: RequestId, params: Message, era: Era) -> None:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(INVALID_PARAMS, 'resources/read needs a string "uri"')
        resource = self._server._resources.get(uri)
        what = f"resource {uri}"
        handler: Any
        if resource is not None:
            mime, handler = resource.mime_type, resource.handler
            work = handler_work(what, lambda v: {"contents": contents(uri, mime, v)}, handler, uri)
        else:
            matches = [(t, t.match(uri)) for t in self._server._templates]
            found = [(t, v) for t, v in matches if v is not None]
            if not found:
                raise RpcError(era.not_found_code, f"resource {uri!r} not found", {"uri": uri})
            template, variables = found[0]
            handler = template.handler
            work = handler_work(
                what,
                lambda v: {"contents": contents(uri, template.mime_type, v)},
                handler,
                uri,
                variables,
            )
        call = era.call(
            CallRequest(
                request_id,
                params,
                self._writer.send,
                "resources/read",
                uri,
                None,
                self._cache_hint(),
            )
        )
        self._calls.start(call, uri, handler, work)
