"""A peer that drives a bundle process over real pipes, the way the node does."""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

FIXTURE = Path(__file__).resolve().parent / "fixture_server.py"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "python" / "server.py"

# Generous: it bounds a hang on a busy machine, it does not measure anything.
TIMEOUT = 20.0

Message = Dict[str, Any]


class Peer:
    """A bundle process with helpers to send lines and wait for what comes back."""

    def __init__(self, script: Path, env: Optional[Dict[str, str]] = None) -> None:
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            [sys.executable, str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=full_env,
        )
        self._ids = itertools.count(1)
        self.last_id: Any = None  # of the latest request()
        self._lines: "queue.Queue[Optional[bytes]]" = queue.Queue()
        self._stderr: List[bytes] = []
        self.junk: List[bytes] = []  # stdout lines that were not JSON
        self.notifications: List[Message] = []
        self._readers = [
            threading.Thread(
                target=self._pump, args=(self.proc.stdout, self._lines.put), daemon=True
            ),
            threading.Thread(
                target=self._pump, args=(self.proc.stderr, self._stderr.append), daemon=True
            ),
        ]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _pump(stream: Any, sink: Any) -> None:
        for line in iter(stream.readline, b""):
            sink(line)
        sink(None)

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def send(self, message: Message) -> None:
        self.send_raw(json.dumps(message).encode())

    def recv_line(self, timeout: float = TIMEOUT) -> bytes:
        """The next raw line on stdout; fails on EOF or timeout."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"no message within {timeout} s; stderr:\n{self.stderr}"
            ) from None
        if line is None:
            raise AssertionError(f"stdout closed; stderr:\n{self.stderr}")
        return line

    def recv(self, timeout: float = TIMEOUT) -> Message:
        """The next message on stdout; fails on EOF, timeout or a non-JSON line."""
        line = self.recv_line(timeout)
        try:
            message: Message = json.loads(line)
        except ValueError:
            self.junk.append(line)
            raise AssertionError(f"stdout carried a line that is not JSON: {line!r}") from None
        return message

    def request(self, method: str, params: Optional[Message] = None, **extra: Any) -> Message:
        """Send a request and return its answer, keeping notifications that come first."""
        request_id = next(self._ids) + 1000
        self.last_id = request_id
        message: Message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        message.update(extra)
        self.send(message)
        return self.wait_for(request_id)

    def wait_for(self, request_id: Any) -> Message:
        while True:
            message = self.recv()
            if "id" in message and message["id"] == request_id and "method" not in message:
                return message
            assert "id" not in message, f"answer to another request: {message}"
            self.notifications.append(message)

    def call(self, name: str, arguments: Optional[Message] = None, **params: Any) -> Message:
        """tools/call returning the result object; fails on a JSON-RPC error."""
        body: Message = {"name": name, **params}
        if arguments is not None:
            body["arguments"] = arguments
        answer = self.request("tools/call", body)
        assert "result" in answer, answer
        result: Message = answer["result"]
        return result

    def initialize(self, version: str = "2025-11-25") -> Message:
        answer = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def notify(self, method: str, params: Message) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def close(self, timeout: float = TIMEOUT) -> List[Message]:
        """Close stdin, wait for exit, and return every message written meanwhile."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout=timeout)
        rest: List[Message] = []
        while True:
            line = self._lines.get_nowait()
            if line is None:
                return rest
            try:
                rest.append(json.loads(line))
            except ValueError:
                self.junk.append(line)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    @property
    def stderr(self) -> str:
        return b"".join(line for line in self._stderr if line is not None).decode(errors="replace")


@pytest.fixture
def spawn() -> Iterator[Any]:
    """Start peers on demand: spawn(script, **env); all are killed at the end."""
    peers: List[Peer] = []

    def start(script: Path = FIXTURE, **env: str) -> Peer:
        peer = Peer(script, env)
        peers.append(peer)
        return peer

    yield start
    for peer in peers:
        peer.kill()


def text_of(result: Message) -> str:
    return "".join(block["text"] for block in result["content"] if block.get("type") == "text")
