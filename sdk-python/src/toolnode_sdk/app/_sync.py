"""The synchronous API: every call runs on one background event loop, from any thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from . import _toolnode
from ._formats import Definitions
from ._results import Call, Outcome

__all__ = ["SyncConversation", "SyncToolnode"]

T = TypeVar("T")


class _Loop:
    """The one background loop of the process, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="toolnode-app-loop", daemon=True).start()
                self._loop = loop
            loop = self._loop
        future = asyncio.run_coroutine_threadsafe(coro, loop)
        try:
            return future.result()
        except BaseException:
            # The caller gave up (KeyboardInterrupt, its own cancellation): so does the work.
            future.cancel()
            raise


_LOOP = _Loop()


class SyncToolnode:
    """:class:`Toolnode` for callers that are not async; safe from many threads at once.

    Takes the same arguments; every instance of one endpoint shares one session on the
    library's background loop.
    """

    def __init__(self, url: str | None = None, **kwargs: Any) -> None:
        self.node = _toolnode.Toolnode(url, **kwargs)

    def list_tools(self) -> list[dict[str, Any]]:
        return _LOOP.run(self.node.list_tools())

    def definitions(self, fmt: str, *, strict: bool = False) -> Definitions:
        return _LOOP.run(self.node.definitions(fmt, strict=strict))

    def tools(self, fmt: str, *, strict: bool = False) -> list[dict[str, Any]]:
        return _LOOP.run(self.node.tools(fmt, strict=strict))

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        return _LOOP.run(self.node.call(name, arguments))

    def run(self, fmt: str, calls: Sequence[Call], *, strict: bool = False) -> list[Outcome]:
        return _LOOP.run(self.node.run(fmt, calls, strict=strict))

    def conversation(self, fmt: str, *, strict: bool = False, max_turns: int = 10) -> SyncConversation:
        return SyncConversation(self.node.conversation(fmt, strict=strict, max_turns=max_turns))

    def close(self) -> None:
        _LOOP.run(self.node.close())


class SyncConversation:
    """:class:`Conversation`, synchronously."""

    def __init__(self, conv: _toolnode.Conversation) -> None:
        self.conv = conv

    @property
    def turns(self) -> int:
        return self.conv.turns

    @property
    def exhausted(self) -> bool:
        return self.conv.exhausted

    def tools(self) -> list[dict[str, Any]]:
        return _LOOP.run(self.conv.tools())

    def calls(self, response: Any) -> list[Call]:
        return self.conv.calls(response)

    def results(self, response: Any) -> list[dict[str, Any]]:
        return _LOOP.run(self.conv.results(response))
