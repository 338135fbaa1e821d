"""What a tool handler can do besides returning: report progress, log, ask the client for
input, notice cancellation."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional

from ._protocol import (
    INPUT_METHODS,
    LOG_LEVELS,
    META_ROUTING_KEY,
    Message,
    RequestId,
    notification,
)

# Asks the client every request of a {key: {"method", "params"}} map; returns the answers.
Asker = Callable[["Context", Dict[str, Message]], Dict[str, Message]]


class InputRequired(BaseException):
    """Ends a handler's round under 2026-07-28: the client must answer requests first.

    The SDK raises and catches it; a BaseException, so that a handler's
    ``except Exception`` does not swallow it.
    """

    def __init__(self, requests: Dict[str, Message], answers: Dict[str, Message]) -> None:
        super().__init__("input required")
        self.requests = requests
        self.answers = answers


def trace_context_of(meta: Any) -> Dict[str, str]:
    """The traceparent and tracestate of a request's _meta, when its traceparent is valid."""
    if not isinstance(meta, dict):
        return {}
    parent = meta.get("traceparent")
    if not isinstance(parent, str) or not _valid_traceparent(parent):
        return {}
    found = {"traceparent": parent}
    state = meta.get("tracestate")
    if isinstance(state, str):
        found["tracestate"] = state
    return found


_HEX = frozenset("0123456789abcdef")


def _valid_traceparent(s: str) -> bool:
    """version-traceid-parentid-flags by W3C Trace Context level 1: lower-case hex, version
    ff invalid, neither id all zeros; version 00 is exactly that, a later one may go on
    after a dash."""
    if len(s) < 55 or s[2] != "-" or s[35] != "-" or s[52] != "-":
        return False
    version, trace_id, parent_id, flags = s[0:2], s[3:35], s[36:52], s[53:55]
    if not set(version + trace_id + parent_id + flags) <= _HEX:
        return False
    if version == "ff" or set(trace_id) == {"0"} or set(parent_id) == {"0"}:
        return False
    if version == "00":
        return len(s) == 55
    return len(s) == 55 or s[55] == "-"


class Context:
    """Handed to every tool handler with its arguments; safe to use from any thread."""

    def __init__(
        self,
        request_id: RequestId,
        progress_token: Optional[RequestId],
        send: Callable[[Message], None],
        log_enabled: Callable[[str], bool],
        asker: Optional[Asker] = None,
        capable: Optional[Callable[[str], bool]] = None,
        trace_context: Optional[Dict[str, str]] = None,
    ) -> None:
        self._request_id = request_id
        self._trace_context = trace_context or {}
        self._progress_token = progress_token
        self._send = send
        self._log_enabled = log_enabled
        self._asker = asker
        self._capable = capable
        self._cancelled = threading.Event()
        # What else a cancellation must reach (an async handler's task), guarded by
        # _status_lock.
        self._cancel_hooks: List[Callable[[], None]] = []
        self._statuses = 0
        self._status_lock = threading.Lock()

    @property
    def request_id(self) -> RequestId:
        """The JSON-RPC id of the tools/call request being served."""
        return self._request_id

    @property
    def trace_context(self) -> Dict[str, str]:
        """The W3C Trace Context the request carried in its _meta, in either era.

        A new dict holding ``traceparent`` (the caller's span: a node's bundle-call span
        when the node traces) and ``tracestate`` when they were sent; empty when the
        request carried no valid traceparent (its tracestate is then dropped too). It is
        a carrier OpenTelemetry reads as it is:
        ``opentelemetry.propagate.extract(ctx.trace_context)``.
        """
        return dict(self._trace_context)

    @property
    def cancelled(self) -> bool:
        """True once the client sent notifications/cancelled for this call.

        The answer of a cancelled call is never sent, so a handler that sees this
        may return anything, or raise, as soon as it likes. An async handler is also
        cancelled as an asyncio task: asyncio.CancelledError at its next await.
        """
        return self._cancelled.is_set()

    def wait_cancelled(self, timeout: float) -> bool:
        """Sleep up to timeout seconds, waking early on cancellation; return cancelled."""
        return self._cancelled.wait(timeout)

    def progress(
        self, progress: float, total: Optional[float] = None, message: Optional[str] = None
    ) -> None:
        """Send notifications/progress; does nothing when the caller asked for none.

        progress must grow with every call, as the spec requires.
        """
        if self._progress_token is None or self.cancelled:
            return
        params: Message = {"progressToken": self._progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        params["_meta"] = self.routing_meta()
        self._send(notification("notifications/progress", params))

    def status(self, message: str) -> None:
        """Report what the call is doing now, for a call that runs as a task.

        A node holding the call's task (toolnode does, for any tool that allows one)
        makes message the task's status message, and makes the call a task at once if it
        is not one yet; what the handler asks before its first report is asked on the
        client's request itself, before any task exists. It is sent as progress counting
        the reports, so it does nothing when the caller asked for no progress.
        """
        with self._status_lock:
            self._statuses += 1
            count = self._statuses
        self.progress(count, message=message)

    def log(self, level: str, data: Any, logger: Optional[str] = None) -> None:
        """Send notifications/message unless the client's logging/setLevel filters it.

        level is one of debug, info, notice, warning, error, critical, alert,
        emergency; data is any JSON value.
        """
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        if not self._log_enabled(level):
            return
        params: Message = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        params["_meta"] = self.routing_meta()
        self._send(notification("notifications/message", params))

    def routing_meta(self) -> Message:
        """The _meta by which the node relates a message to this call."""
        return {META_ROUTING_KEY: self._request_id}

    def ask(self, requests: Mapping[str, Mapping[str, Any]]) -> Dict[str, Message]:
        """Ask the client for input: ``{key: {"method": ..., "params": {...}}}`` with
        methods elicitation/create, sampling/createMessage or roots/list. Returns the
        client's result for each key.

        Under 2025-11-25 and older each is sent to the client as a request. Under
        2026-07-28 the call ends with an input_required result and is run again, from the
        start, once the client has the answers: a handler must ask the same questions in
        the same order, and do nothing it cannot repeat before its last question.
        Raises ToolnodeError (as a JSON-RPC error) when the client lacks the capability.
        """
        wanted: Dict[str, Message] = {}
        for key, request in requests.items():
            method = request.get("method")
            if method not in INPUT_METHODS:
                raise ValueError(
                    f"input {key!r}: method must be one of {', '.join(INPUT_METHODS)}"
                )
            wanted[key] = {"method": method, "params": dict(request.get("params") or {})}
        if self._asker is None:
            raise RuntimeError("this call cannot ask the client for input")
        return self._asker(self, wanted)

    def capable(self, capability: str) -> bool:
        """Whether the client declared capability ("elicitation", "sampling", "roots") for
        this request. Under 2026-07-28 a handler asks only what the client can answer; in a
        session it is always True, and the client refuses what it cannot do."""
        return self._capable is None or self._capable(capability)

    def elicit(self, key: str, message: str, requested_schema: Mapping[str, Any]) -> Message:
        """Ask the user (elicitation/create, form mode); returns the ElicitResult."""
        params = {"message": message, "requestedSchema": dict(requested_schema)}
        return self.ask({key: {"method": "elicitation/create", "params": params}})[key]

    def create_message(self, key: str, params: Mapping[str, Any]) -> Message:
        """Ask the client's model (sampling/createMessage); returns its result."""
        return self.ask({key: {"method": "sampling/createMessage", "params": params}})[key]

    def list_roots(self, key: str) -> List[Message]:
        """Ask for the client's roots (roots/list); returns the list of roots."""
        roots = self.ask({key: {"method": "roots/list", "params": {}}})[key].get("roots")
        return roots if isinstance(roots, list) else []

    async def ask_async(self, requests: Mapping[str, Mapping[str, Any]]) -> Dict[str, Message]:
        """ask() for an async handler: waits for the client's answers on a thread of its
        own, so the event loop goes on serving the other calls meanwhile."""
        return await asyncio.get_running_loop().run_in_executor(None, self.ask, requests)

    def _on_cancel(self, hook: Callable[[], None]) -> None:
        """Call hook on cancellation: now, if the call is cancelled already."""
        with self._status_lock:
            if not self._cancelled.is_set():
                self._cancel_hooks.append(hook)
                return
        hook()

    def _cancel(self) -> None:
        with self._status_lock:
            self._cancelled.set()
            hooks, self._cancel_hooks = self._cancel_hooks, []
        for hook in hooks:
            hook()
