"""Requests of ours to the client (2025-11-25 and older): a handler's questions, each sent
as a request whose answer arrives on stdin like any message."""

from __future__ import annotations

import itertools
import logging
import threading
from typing import Callable, Dict, Optional

from ._context import Context
from ._errors import ToolError
from ._protocol import INTERNAL_ERROR, Message, RpcError, notification

_log = logging.getLogger("toolnode_sdk")


class _Pending:
    """A request of ours waiting for the client's answer."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: Message = {}
        self.error: Optional[BaseException] = None


class ClientRequests:
    """The requests of ours waiting for the client's answers, by id."""

    def __init__(self, send: Callable[[Message], None]) -> None:
        self._send = send
        self._lock = threading.Lock()
        self._pending: Dict[str, _Pending] = {}
        self._ids = itertools.count(1)
        self._ended = False

    def ask(self, ctx: Context, wanted: Dict[str, Message]) -> Dict[str, Message]:
        """Send each of wanted ({key: {"method", "params"}}) and return the answers by key.

        Capabilities are not checked here: the client answers a request it cannot serve
        with an error, and a node in between may declare less than its clients can do.
        """
        return {key: self._request(ctx, r["method"], r["params"]) for key, r in wanted.items()}

    def _request(self, ctx: Context, method: str, params: Message) -> Message:
        request_id = f"tn-{next(self._ids)}"
        pending = _Pending()
        with self._lock:
            if self._ended:
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
                        notification(
                            "notifications/cancelled",
                            {"requestId": request_id, "_meta": ctx.routing_meta()},
                        )
                    )
                    raise ToolError("cancelled")
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
        if pending.error is not None:
            raise pending.error
        return pending.result

    def answered(self, message: Message) -> None:
        """Hand a response from the client to the request it answers."""
        with self._lock:
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

    def end(self) -> None:
        """The client's input ended: what waits fails, and nothing more is sent."""
        with self._lock:
            self._ended = True
            waiting = list(self._pending.values())
        for pending in waiting:
            pending.error = ToolError("the client's input ended before it answered")
            pending.done.set()
