"""The event loop a session runs its async handlers on, in a thread of its own."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any, Callable, Coroutine, Optional, Set


class LoopThread:
    """An asyncio event loop on a daemon thread, started by the first coroutine given.

    Servers with sync handlers only never start it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._thread: Optional[threading.Thread] = None
        self._running: Set["concurrent.futures.Future[None]"] = set()

    def submit(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run coro on the loop; close() waits for it."""
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(
                    target=loop.run_forever, name="toolnode-async", daemon=True
                )
                self._thread.start()
                self._loop = loop
            future = asyncio.run_coroutine_threadsafe(coro, self._loop)
            self._running.add(future)
        future.add_done_callback(self._finished)

    def call_soon(self, func: Callable[[], None]) -> None:
        """Run func on the loop's thread (to cancel a task from another thread)."""
        with self._lock:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.call_soon_threadsafe(func)

    def close(self) -> None:
        """Wait for every coroutine given, then stop the loop and its thread."""
        with self._lock:
            running = list(self._running)
        concurrent.futures.wait(running)
        with self._lock:
            loop, thread, self._loop = self._loop, self._thread, None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()

    def _finished(self, future: "concurrent.futures.Future[None]") -> None:
        with self._lock:
            self._running.discard(future)
