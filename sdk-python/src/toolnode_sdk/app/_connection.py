"""One MCP session per endpoint, shared by every caller on an event loop.

The official ``mcp`` client speaks the protocol; this module keeps one of it per endpoint,
joins callers to a connect or a listing already in flight, caches the tool list until the
server says it changed (``notifications/tools/list_changed``) or its ``ttlMs`` runs out, and
opens the session again on the next call once it is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

import httpx2
from mcp import Client
from mcp.client.session import IncomingMessage, MessageHandlerFnT
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, Implementation, PaginatedRequestParams

__all__ = ["CLIENT_NAME", "Connection", "Endpoint", "Unreachable", "connection"]

log = logging.getLogger("toolnode_sdk.app")

CLIENT_NAME = "toolnode-app"
"""The clientInfo name the library gives: the node shows it canonical names and pages."""

# Bounds a server whose cursors never end.
_MAX_PAGES = 1000


class Unreachable(ConnectionError):
    """The node could not be reached, or the session to it was lost."""


@dataclass(frozen=True)
class Endpoint:
    """Where a node is: a Streamable HTTP URL (with a bearer or OAuth access token), or a
    command that serves MCP on stdio, started by the library (``toolnode serve`` on bundle
    folders by default)."""

    url: str | None = None
    token: str | None = field(default=None, repr=False)
    command: tuple[str, ...] = ()
    mode: str = "auto"

    def key(self) -> tuple[Any, ...]:
        """What makes two endpoints one: the token only as a hash."""
        token = hashlib.sha256(self.token.encode()).hexdigest() if self.token else ""
        return (self.url, token, self.command, self.mode)

    def describe(self) -> str:
        return self.url if self.url else " ".join(self.command)

    def http(self) -> httpx2.AsyncClient | None:
        """The HTTP client of a URL endpoint (the caller closes it), None for stdio."""
        if not self.url:
            return None
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=None))

    def client(self, on_message: MessageHandlerFnT, http: httpx2.AsyncClient | None) -> Client:
        if self.url:
            server: Any = streamable_http_client(self.url, http_client=http)
        else:
            server = StdioServerParameters(command=self.command[0], args=list(self.command[1:]))
        from .. import __version__

        return Client(server, client_info=Implementation(name=CLIENT_NAME, version=__version__),
                      message_handler=on_message, mode=self.mode, cache=None)


def broken(err: BaseException) -> bool:
    """Whether an error means the session is gone (not an answer of the server's)."""
    if isinstance(err, MCPError):
        return err.code == CONNECTION_CLOSED or "Session terminated" in str(err)
    return not isinstance(err, (asyncio.CancelledError, TimeoutError))


@dataclass
class ToolList:
    """The tools of an endpoint as ``tools/list`` gave them (JSON objects), and when it did."""

    tools: list[dict[str, Any]]
    version: int  # bumped on each fetch: definitions made from a list can be reused while it holds


class Connection:
    """The shared session of one endpoint on one event loop."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._owner: asyncio.Task[None] | None = None
        self._connecting: asyncio.Future[Client] | None = None
        self._tools: ToolList | None = None
        self._expires = float("inf")
        self._listing: asyncio.Future[ToolList] | None = None
        self._epoch = 0  # bumped by list_changed and by a lost session: a listing under an older one is stale
        self._fetches = 0
        self.lists = 0  # tools/list requests sent, for tests and stats

    # ---- the session ----

    async def client(self) -> Client:
        """The open session, opening it (once, for every caller at that moment) when there is none."""
        if self._client is not None:
            return self._client
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(self._open())
            self._connecting.add_done_callback(self._connected)
        return await asyncio.shield(self._connecting)

    def _connected(self, fut: asyncio.Future[Client]) -> None:
        self._connecting = None
        if not fut.cancelled() and fut.exception() is None:
            self._client = fut.result()

    async def _open(self) -> Client:
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        stop = asyncio.Event()
        self._stop = stop
        # The session lives in a task of its own: the SDK's transports must be entered and
        # left in one task, and callers come and go.
        self._owner = asyncio.ensure_future(self._own(ready, stop))
        try:
            return await ready
        except Exception as e:
            raise Unreachable(f"cannot reach the node at {self.endpoint.describe()}: {e}") from e

    async def _own(self, ready: asyncio.Future[Client], stop: asyncio.Event) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                http = self.endpoint.http()
                if http is not None:
                    await stack.enter_async_context(http)
                c = await stack.enter_async_context(self.endpoint.client(self._on_message, http))
                ready.set_result(c)
                await stop.wait()
        except BaseException as e:  # the session ends however it ends; callers see it through ready
            if not ready.done():
                ready.set_exception(e if isinstance(e, Exception) else ConnectionError(repr(e)))
            elif not isinstance(e, (asyncio.CancelledError, GeneratorExit)):
                log.debug("session to %s ended: %r", self.endpoint.describe(), e)

    def lost(self, client: Client) -> None:
        """Forget a session found broken; the next call opens another."""
        if self._client is client:
            self._client = None
            self._epoch += 1
            self._tools = None
            if self._stop is not None:
                self._stop.set()

    async def close(self) -> None:
        """End the session (a started node stops with it)."""
        self._client = None
        self._tools = None
        if self._stop is not None:
            self._stop.set()
        if self._owner is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._owner), 10)
            except (asyncio.TimeoutError, Exception):
                self._owner.cancel()

    async def _on_message(self, message: IncomingMessage) -> None:
        method = getattr(message, "method", None) or getattr(getattr(message, "root", None), "method", None)
        if method == "notifications/tools/list_changed":
            self._epoch += 1
            self._tools = None
        await asyncio.sleep(0)

    # ---- the tool list ----

    async def tools(self) -> ToolList:
        """Every tool of the endpoint, from the cache while it holds; concurrent callers share one listing."""
        if self._tools is not None and time.monotonic() < self._expires:
            return self._tools
        if self._listing is None:
            self._listing = asyncio.ensure_future(self._list())
            self._listing.add_done_callback(self._listed)
        return await asyncio.shield(self._listing)

    def _listed(self, fut: asyncio.Future[ToolList]) -> None:
        self._listing = None

    async def _list(self) -> ToolList:
        epoch = self._epoch
        c = await self.client()
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        ttl: int | None = None
        try:
            for _ in range(_MAX_PAGES):
                self.lists += 1
                page = await c.session.list_tools(params=PaginatedRequestParams(cursor=cursor))
                if ttl is None and "ttl_ms" in page.model_fields_set:
                    ttl = page.ttl_ms
                tools += [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    break
        except Exception as e:
            if broken(e):
                self.lost(c)
                raise Unreachable(f"lost the node at {self.endpoint.describe()} while listing tools: {e}") from e
            raise
        self._fetches += 1
        result = ToolList(tools, self._fetches)
        if epoch == self._epoch:  # a change announced during the listing makes it stale at once
            self._tools = result
            self._expires = time.monotonic() + ttl / 1000 if ttl is not None else float("inf")
        return result


# One Connection per endpoint per event loop: a session belongs to the loop that opened it.
_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], Connection]] = (
    weakref.WeakKeyDictionary()
)


def connection(endpoint: Endpoint) -> Connection:
    """The shared Connection of ``endpoint`` on the running loop."""
    loop = asyncio.get_running_loop()
    pool = _pools.setdefault(loop, {})
    conn = pool.get(endpoint.key())
    if conn is None:
        conn = pool[endpoint.key()] = Connection(endpoint)
    return conn


def forget(endpoint: Endpoint) -> Connection | None:
    """Take ``endpoint``'s Connection on the running loop out of the pool."""
    pool = _pools.get(asyncio.get_running_loop(), {})
    return pool.pop(endpoint.key(), None)
