"""Stdout for protocol messages only, and the writer every part of a session sends with."""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import IO, Tuple

from ._protocol import Message, encode

_log = logging.getLogger("toolnode_sdk")


def claim_stdio() -> Tuple[IO[bytes], IO[bytes]]:
    """Keep stdout for protocol messages only and send everything else to stderr.

    A stray print() or a C library's printf on fd 1 would corrupt the stream, so
    the protocol gets a private copy of fd 1 and fd 1 itself becomes stderr.
    """
    sys.stdout.flush()
    try:
        out: IO[bytes] = os.fdopen(os.dup(1), "wb")
        os.dup2(2, 1)
    except OSError:
        out = sys.stdout.buffer
    sys.stdout = sys.stderr
    return sys.stdin.buffer, out


class Writer:
    """Whole messages, one per line, flushed; safe from any thread. Once the reader is
    gone, further messages are dropped."""

    def __init__(self, out: IO[bytes]) -> None:
        self._out = out
        self._lock = threading.Lock()
        self._broken = False

    def send(self, message: Message) -> None:
        """Encode and write one message."""
        self.write(encode(message))

    def write(self, line: bytes) -> None:
        """Write one encoded message."""
        with self._lock:
            if self._broken:
                return
            try:
                self._out.write(line)
                self._out.flush()
            except (BrokenPipeError, ValueError):
                # Nobody reads any more; keep draining stdin until it closes too.
                self._broken = True
                _log.warning("stdout is closed; dropping further messages")
