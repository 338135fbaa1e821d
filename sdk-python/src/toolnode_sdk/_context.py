"""What a tool handler can do besides returning: report progress, log, notice cancellation."""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional

from ._protocol import LOG_LEVELS, Message, RequestId, notification


class Context:
    """Handed to every tool handler with its arguments; safe to use from any thread."""

    def __init__(
        self,
        request_id: RequestId,
        progress_token: Optional[RequestId],
        send: Callable[[Message], None],
        log_enabled: Callable[[str], bool],
    ) -> None:
        self._request_id = request_id
        self._progress_token = progress_token
        self._send = send
        self._log_enabled = log_enabled
        self._cancelled = threading.Event()

    @property
    def request_id(self) -> RequestId:
        """The JSON-RPC id of the tools/call request being served."""
        return self._request_id

    @property
    def cancelled(self) -> bool:
        """True once the client sent notifications/cancelled for this call.

        The answer of a cancelled call is never sent, so a handler that sees this
        may return anything, or raise, as soon as it likes.
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
        self._send(notification("notifications/progress", params))

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
        self._send(notification("notifications/message", params))

    def _cancel(self) -> None:
        self._cancelled.set()
