"""Calls per second of the Python example bundle, spoken to directly over stdio.

Usage: python3 bench.py [seconds-per-run]   (default 3)

For each window (1 and 8 calls in flight) it keeps that many `greet` calls
outstanding for the given time and prints the rate of answers.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any, Dict

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "python"


def _line(message: Dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def _call(request_id: int) -> bytes:
    params = {"name": "greet", "arguments": {"name": "bench"}}
    return _line({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


def _answer(stdout: IO[bytes]) -> Dict[str, Any]:
    message: Dict[str, Any] = json.loads(stdout.readline())
    if "result" not in message or message["result"].get("isError"):
        raise SystemExit(f"unexpected answer: {message}")
    return message


def run(window: int, seconds: float) -> float:
    proc = subprocess.Popen(
        ["python3", "./server.py"], cwd=EXAMPLE, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None and stdout is not None
    stdin.write(
        _line(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                },
            }
        )
    )
    stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    stdin.flush()
    _answer(stdout)

    sent = done = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        sending = time.perf_counter() < deadline
        while sending and sent - done < window:
            sent += 1
            stdin.write(_call(sent))
        stdin.flush()
        if done == sent:
            break
        _answer(stdout)
        done += 1
    elapsed = time.perf_counter() - start
    stdin.close()
    proc.wait()
    return done / elapsed


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    print(f"{'in flight':>9}  {'calls/s':>9}")
    for window in (1, 8):
        print(f"{window:>9}  {run(window, seconds):>9.0f}")


if __name__ == "__main__":
    main()
