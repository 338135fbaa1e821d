"""Who hears of a resource's change: a session's resources/subscribe, and 2026-07-28's
subscriptions/listen requests.

A 2026-07-28 client has no resources/subscribe: it opens subscriptions/listen, naming what
it wants, and the request stays open, never answered while the client listens. What is sent
for it carries the request's id in _meta; notifications/cancelled ends it.
"""

from __future__ import annotations

import threading
from typing import Callable, Dict, List, Set

from ._protocol import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    META_SUBSCRIPTION_ID,
    Message,
    RequestId,
    RpcError,
    notification,
)


class Subscriptions:
    """The URIs the session subscribed to and the open subscriptions/listen requests."""

    def __init__(
        self,
        send: Callable[[Message], None],
        serves: Callable[[str], bool],
        in_use: Callable[[RequestId], bool],
    ) -> None:
        self._send = send
        self._serves = serves
        self._in_use = in_use
        self._lock = threading.Lock()
        self._subscribed: Set[str] = set()
        # The resource URIs each open subscriptions/listen agreed to, by its id.
        self._listens: Dict[RequestId, Set[str]] = {}
        self._ended = False

    def subscribe(self, params: Message, on: bool) -> Message:
        """resources/subscribe (on) and resources/unsubscribe."""
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(INVALID_PARAMS, 'needs a string "uri"')
        with self._lock:
            (self._subscribed.add if on else self._subscribed.discard)(uri)
        return {}

    def listen(self, request_id: RequestId, params: Message) -> None:
        """Open the subscription of a subscriptions/listen request and acknowledge it."""
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
        with self._lock:
            if request_id in self._listens or self._in_use(request_id):
                raise RpcError(
                    INVALID_REQUEST, f"invalid request: id {request_id!r} is already in use"
                )
            if self._ended:
                return
            self._listens[request_id] = set(agreed)
            # Sent under the lock, so that no update for it can go out before it.
            self._send(
                notification(
                    "notifications/subscriptions/acknowledged",
                    {"_meta": {META_SUBSCRIPTION_ID: request_id}, "notifications": filter_},
                )
            )

    def unlisten(self, request_id: RequestId) -> bool:
        """End the subscription opened by request_id; True when there was one."""
        with self._lock:
            return self._listens.pop(request_id, None) is not None

    def updated(self, uri: str) -> None:
        """Tell whoever subscribed to uri that it changed."""
        with self._lock:
            wanted = uri in self._subscribed
            listening = [i for i, uris in self._listens.items() if uri in uris]
        if wanted:
            self._send(_updated(uri, {}))
        for request_id in listening:
            self._send(_updated(uri, {"_meta": {META_SUBSCRIPTION_ID: request_id}}))

    def end(self) -> None:
        """The client is gone: its subscriptions end with no answer."""
        with self._lock:
            self._ended = True
            self._listens.clear()


def _updated(uri: str, params: Message) -> Message:
    return notification("notifications/resources/updated", {**params, "uri": uri})
