"""The requestState of input_required results: sealed so a client can carry it, not edit it.

Under 2026-07-28 a tool that needs input ends its round with the questions; the client
asks them and calls again with the answers and the state. The state holds the answers of
earlier rounds and what the call was (method, target, digest of the arguments), and is
signed with HMAC-SHA256, so a client cannot forge earlier answers or move them to another
call. The key is TOOLNODE_STATE_KEY when set (so that every instance of a bundle accepts
the others' state), else random per process.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import time
from typing import Any, Dict, Optional

from ._protocol import Message

STATE_KEY_ENV = "TOOLNODE_STATE_KEY"
# Long enough for a person to answer an elicitation, short enough to bound replays.
STATE_TTL_SECONDS = 15 * 60


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def call_digest(method: str, target: str, arguments: Any) -> str:
    """What binds a state to one call: its method, tool or prompt name, and arguments."""
    canonical = json.dumps([method, target, arguments], sort_keys=True, separators=(",", ":"))
    return _b64(hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).digest())


class StateSealer:
    """Seals and opens requestState values with one key."""

    def __init__(self, key: Optional[bytes] = None) -> None:
        if key is None:
            env = os.environ.get(STATE_KEY_ENV)
            key = env.encode() if env else os.urandom(32)
        self._key = key

    def _mac(self, body: str) -> str:
        return _b64(hmac.new(self._key, body.encode(), hashlib.sha256).digest())

    def seal(self, digest: str, answers: Dict[str, Message]) -> str:
        body = _b64(
            json.dumps(
                {"d": digest, "x": int(time.time()) + STATE_TTL_SECONDS, "r": answers},
                separators=(",", ":"),
            ).encode()
        )
        return body + "." + self._mac(body)

    def open(self, state: str, digest: str) -> Dict[str, Message]:
        """The answers a state carries; ValueError when it was not sealed here for this
        call, or has expired."""
        body, _, mac = state.partition(".")
        if not hmac.compare_digest(mac, self._mac(body)):
            raise ValueError("requestState failed its integrity check")
        payload = json.loads(_unb64(body))
        if payload.get("d") != digest:
            raise ValueError("requestState belongs to another call")
        if payload.get("x", 0) < time.time():
            raise ValueError("requestState has expired")
        answers: Dict[str, Message] = payload.get("r", {})
        return answers
