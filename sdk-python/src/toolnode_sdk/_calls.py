"""Running calls (tools/call, prompts/get, resources/read): sync handlers on a thread pool,
async ones on the session's event loop, both answered once and never after a cancellation.

A call's work is one coroutine whatever its handler: for a sync handler it never suspends,
so a pool thread drives it to its end with send(None); for an async handler it runs as a
task on the loop, and a cancellation cancels that task, so the handler sees
asyncio.CancelledError at its next await.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Coroutine, Dict

from ._aio import LoopThread
from ._context import Context, InputRequired
from ._era import Call, Work
from ._errors import ToolError
from ._output import Writer
from ._protocol import (
    INTERNAL_ERROR,
    Message,
    RequestId,
    RpcError,
    encode,
    error_response,
    response,
)
from ._schema import check_arguments
from ._tool import Tool, call_result, text_result

_log = logging.getLogger("toolnode_sdk")


class Calls:
    """The calls in flight, by request id, and where they run."""

    def __init__(self, writer: Writer, max_workers: int) -> None:
        self._writer = writer
        self._lock = threading.Lock()
        self._inflight: Dict[RequestId, Context] = {}
        self._pool = ThreadPoolExecutor(max_workers, thread_name_prefix="toolnode-call")
        self._loop = LoopThread()

    def in_use(self, request_id: RequestId) -> bool:
        """Whether a call of that request id is in flight."""
        with self._lock:
            return request_id in self._inflight

    def start(self, call: Call, target: str, handler: Any, work: Work) -> None:
        """Run work for call: on the loop when handler is a coroutine function, else on
        the pool. target names the tool, prompt or URI in failures."""
        ctx = call.ctx
        with self._lock:
            self._inflight[ctx.request_id] = ctx
        if _is_async(handler):
            self._loop.submit(self._on_loop(call, target, work))
        else:
            self._pool.submit(_drive, self._finish(call, target, work))

    def cancel(self, request_id: RequestId) -> None:
        """The client cancelled the call of request_id, if one is in flight."""
        with self._lock:
            ctx = self._inflight.get(request_id)
        if ctx is not None:
            ctx._cancel()

    def cancel_all(self) -> None:
        """Nobody waits for the answers any more: cancel every call."""
        with self._lock:
            calls = list(self._inflight.values())
        for ctx in calls:
            ctx._cancel()

    def close(self) -> None:
        """Wait for the calls in flight to finish."""
        self._pool.shutdown(wait=True)
        self._loop.close()

    async def _on_loop(self, call: Call, target: str, work: Work) -> None:
        task = asyncio.current_task()
        if task is not None:
            call.ctx._on_cancel(lambda: self._loop.call_soon(lambda: _cancel(task)))
        await self._finish(call, target, work)

    async def _finish(self, call: Call, target: str, work: Work) -> None:
        ctx = call.ctx
        try:
            if ctx.cancelled:
                return
            try:
                line = encode(response(ctx.request_id, await call.run(work)))
            except RpcError as exc:
                line = encode(error_response(ctx.request_id, exc.code, exc.message, exc.data))
            except (TypeError, ValueError, RecursionError) as exc:
                failure = text_result(
                    f"tool {target} returned a value that is not JSON: {exc}", is_error=True
                )
                line = encode(response(ctx.request_id, failure))
            except asyncio.CancelledError:
                if not ctx.cancelled:
                    raise
                return
            if ctx.cancelled:
                return  # The spec: no answer for a cancelled request.
            self._writer.write(line)
        finally:
            with self._lock:
                if self._inflight.get(ctx.request_id) is ctx:
                    del self._inflight[ctx.request_id]


def tool_work(tool: Tool, args: Dict[str, Any]) -> Work:
    """A tools/call's work: check the arguments and run the handler; every failure of the
    tool becomes an isError result."""

    async def work(ctx: Context) -> Message:
        problem = check_arguments(tool.input_schema, args)
        if problem is not None:
            return text_result(problem, is_error=True)
        try:
            return call_result(await _result_of(tool.handler, args, ctx))
        except RpcError:
            raise  # the call fails as a whole, e.g. for a capability the client lacks
        except ToolError as exc:
            return text_result(str(exc), is_error=True)
        except Exception as exc:
            _log.exception("tool %s failed", tool.name)
            return text_result(f"tool {tool.name} failed: {exc}", is_error=True)

    return work


def handler_work(
    what: str, convert: Callable[[Any], Message], handler: Any, *args: Any
) -> Work:
    """A prompts/get's or resources/read's work: a failure is a JSON-RPC error, not a
    result."""

    async def work(ctx: Context) -> Message:
        try:
            return convert(await _result_of(handler, *args, ctx))
        except (RpcError, InputRequired):
            raise
        except Exception as exc:
            _log.exception("%s failed", what)
            raise RpcError(INTERNAL_ERROR, f"{what} failed: {exc}") from None

    return work


def _cancel(task: "asyncio.Task[Any]") -> None:
    task.cancel()


async def _result_of(handler: Any, *args: Any) -> Any:
    value = handler(*args)
    if inspect.isawaitable(value):
        value = await value
    return value


def _is_async(handler: Any) -> bool:
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        getattr(handler, "__call__", None)
    )


def _drive(coro: Coroutine[Any, Any, None]) -> None:
    """Run a call's coroutine, which never suspends for a sync handler, to its end on
    this thread."""
    try:
        coro.send(None)
    except StopIteration:
        return
    coro.close()  # its call is then never answered, as for a cancelled one
    _log.error("a handler that is not async def returned an awaitable: declare it async def")
