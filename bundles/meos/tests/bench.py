"""Calls per second of meos.length and meos.distance, straight over the
bundle's stdio: one call in flight, then eight pipelined.

    python3 tests/bench.py [calls per run]
"""

import sys
import time

from bundle_client import Bundle, load_cases

FIXTURES, _ = load_cases()
CALLS = {
    "length": {"point": FIXTURES["P"]},
    "distance": {"point": FIXTURES["P"], "other": FIXTURES["R"]},
}


def run(bundle, tool, arguments, n, in_flight):
    params = {"name": tool, "arguments": arguments}
    start = time.perf_counter()
    sent = received = 0
    while received < n:
        while sent < n and sent - received < in_flight:
            bundle.send_request("tools/call", params)
            sent += 1
        answer = bundle.receive()
        assert not answer["result"].get("isError"), answer
        received += 1
    return n / (time.perf_counter() - start)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    bundle = Bundle()
    print(f"{'tool':<10} {'in flight':>9} {'calls/s':>10}")
    for tool, arguments in CALLS.items():
        run(bundle, tool, arguments, 200, 1)  # warm up
        for in_flight in (1, 8):
            print(f"{tool:<10} {in_flight:>9} {run(bundle, tool, arguments, n, in_flight):>10.0f}")
    assert bundle.close() == 0


if __name__ == "__main__":
    main()
