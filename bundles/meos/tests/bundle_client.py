"""Drives the MEOS bundle over its stdio, and checks answers against cases.json."""

import json
import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
BUNDLE = os.path.join(HERE, "..", "build", "meos-bundle")
CASES = os.path.join(HERE, "cases.json")


# The road network of the network-point tools: a few routes made for the tests.
WAYS = os.path.join(HERE, "data", "ways.csv")


class Bundle:
    """One bundle process, initialized, spoken to one JSON-RPC line at a time.
    ways names its road network (MEOS_WAYS); None gives it none. env: variables
    added to the process's environment."""

    def __init__(self, prefix=(), stderr=subprocess.DEVNULL, ways=WAYS, env=None):
        environ = {k: v for k, v in os.environ.items() if k != "MEOS_WAYS"}
        if ways:
            environ["MEOS_WAYS"] = ways
        environ.update(env or {})
        self.proc = subprocess.Popen(
            [*prefix, BUNDLE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            encoding="utf-8",
            env=environ,
        )
        self.next_id = 0
        self.info = self.request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "meos-tests", "version": "1"}},
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def send_request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def receive(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the bundle closed its stdout (exit code {self.proc.wait()})")
        return json.loads(line)

    def request(self, method, params):
        sent = self.send_request(method, params)
        answer = self.receive()
        assert answer.get("id") == sent, answer
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def call(self, tool, arguments):
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def close(self):
        """Closes stdin and returns the exit code."""
        self.proc.stdin.close()
        code = self.proc.wait(timeout=120)
        self.proc.stdout.close()
        return code


def load_cases():
    with open(CASES, encoding="utf-8") as f:
        doc = json.load(f)
    return doc["fixtures"], doc["cases"]


def arguments_of(case, fixtures):
    """The case's arguments with ${NAME} fixtures filled in and padding applied."""

    def fill(value):
        if isinstance(value, str):
            return re.sub(r"\$\{(\w+)\}", lambda m: fixtures[m.group(1)], value)
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fill(v) for v in value]
        return value

    args = fill(case["arguments"])
    for key, size in case.get("pad", {}).items():
        args[key] = args[key] + " " * (size - len(args[key].encode("utf-8")))
    return args


def close_enough(want, got):
    return abs(want - got) <= 1e-6 * max(1.0, abs(want))


def check_subset(want, got, path="$"):
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{path}: want an object, got {got!r}"
        for key, value in want.items():
            assert key in got, f"{path}: no {key!r} in {got!r}"
            check_subset(value, got[key], f"{path}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{path}: want {want!r}, got {got!r}"
        for i, (w, g) in enumerate(zip(want, got)):
            check_subset(w, g, f"{path}[{i}]")
    elif isinstance(want, (int, float)) and not isinstance(want, bool):
        assert isinstance(got, (int, float)) and not isinstance(got, bool), f"{path}: want {want}, got {got!r}"
        assert close_enough(want, got), f"{path}: want {want}, got {got}"
    else:
        assert got == want, f"{path}: want {want!r}, got {got!r}"


POINT = re.compile(r"POINT(?: ?Z)?\(([^()]*)\)")


def check_answer(case, result):
    """Asserts that a tools/call result is what the case expects."""
    expect = case["expect"]
    name = case["name"]
    text = result["content"][0]["text"]
    if "error" in expect:
        assert result.get("isError") is True, f"{name}: want an error, got {text!r}"
        assert expect["error"] in text, f"{name}: want {expect['error']!r} in {text!r}"
        return
    assert not result.get("isError"), f"{name}: unexpected error {text!r}"
    if "structuredContent" in result:
        assert json.loads(text) == result["structuredContent"], f"{name}: text block differs from structuredContent"
    if "text" in expect:
        assert text == expect["text"], f"{name}: want {expect['text']!r}, got {text!r}"
    for part in expect.get("text_contains", []):
        assert part in text, f"{name}: want {part!r} in {text!r}"
    if "text_regex" in expect:
        assert re.search(expect["text_regex"], text), f"{name}: {text!r} does not match {expect['text_regex']!r}"
    if "json" in expect:
        check_subset(expect["json"], json.loads(text), name)
    if "structured" in expect:
        check_subset(expect["structured"], result.get("structuredContent"), name)
    if "points" in expect:
        got = [[float(v) for v in m.split()] for m in POINT.findall(text)]
        want = expect["points"]
        assert len(got) == len(want), f"{name}: want points {want}, got {got} in {text!r}"
        for w, g in zip(want, got):
            assert all(close_enough(a, b) for a, b in zip(w, g)) and len(w) <= len(g), f"{name}: want {w}, got {g}"
