"""The generated tools: a bounded slice of the differential and fuzz runs
through the node (the full runs are make diff and make fuzz), and a sample
under valgrind."""

import json
import os
import random
import shutil
import subprocess
import sys

import pytest

from bundle_client import Bundle

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
NODE = os.path.join(HERE, "..", "build", "toolnode")
sys.path.insert(0, HERE)
import diff  # noqa: E402


@pytest.fixture(scope="module")
def node():
    if not shutil.which("go"):
        pytest.skip("go is not installed: the node cannot be built")
    subprocess.run(["go", "build", "-o", NODE, "./runtime/cmd/toolnode"], cwd=ROOT, check=True)
    return NODE


def test_differential_slice_and_fuzz_through_the_node(node, tmp_path):
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "diff.py"), "--node", node, "--every", "7",
         "--combos", "2", "--fuzz", "600", "--report", str(report)],
        capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    stats = json.loads(report.read_text())["stats"]
    # The slice exercised most of what it picked, and every call came back.
    assert stats["exercised"] > stats["picked"] // 2
    assert stats["bundle_restarts"] == 0 and stats["disagreeing"] == 0


@pytest.mark.skipif(not shutil.which("valgrind"), reason="valgrind is not installed")
def test_generated_sample_under_valgrind():
    with open(diff.MANIFEST, encoding="utf-8") as f:
        tools = json.load(f)
    rng = random.Random(7)
    b = Bundle(prefix=["valgrind", "--error-exitcode=99", "--leak-check=no", "--quiet"],
               stderr=subprocess.PIPE)
    calls = 0
    for tool in tools[::8]:
        for args, _ in diff.combos(tool, 1):
            b.call(tool["name"], args)
            mutated = {k: diff.mutate(v, rng) for k, v in args.items()}
            b.call(tool["name"], mutated)
            calls += 2
    b.proc.stdin.close()
    report = b.proc.stderr.read()
    code = b.proc.wait(timeout=600)
    assert calls > 300
    assert code == 0, f"valgrind found errors after {calls} calls:\n{report[-6000:]}"


# HexWKB written by the bundle itself, for a value of each family, and the tool reading it back.
HEX_SOURCES = [
    ("temporal_as_hexwkb", {"temp": "[1.5@2025-01-01, 2.5@2025-01-02]", "variant": 0},
     "temporal_num_instants", "temp"),
    ("temporal_as_hexwkb", {"temp": "{[POINT(1 1)@2025-01-01, POINT(2 2)@2025-01-02], "
                                    "[POINT(3 3)@2025-01-03]}", "variant": 4},
     "temporal_num_instants", "temp"),
    ("set_as_hexwkb", {"s": '{"a", "bc"}', "variant": 0}, "set_num_values", "s"),
    ("span_as_hexwkb", {"s": "[1.5, 2.5]", "variant": 0}, "span_lower_inc", "s"),
    ("spanset_as_hexwkb", {"ss": "{[1, 2), [3, 4)}", "variant": 0}, "spanset_num_spans", "ss"),
    ("tbox_as_hexwkb", {"box": "TBOXFLOAT XT([1, 2],[2025-01-01, 2025-01-02])", "variant": 0},
     "tbox_hasx", "box"),
    ("stbox_as_hexwkb", {"box": "SRID=4326;STBOX Z((0,0,0),(3,4,5))", "variant": 4},
     "stbox_hasx", "box"),
]


def test_mutated_hexwkb_is_answered_not_fatal():
    """HexWKB carries its type; truncated or altered bytes after a valid
    header must come back as answers or tool errors."""
    rng = random.Random(5)
    b = Bundle()
    for writer, args, reader, param in HEX_SOURCES:
        hexwkb = b.call(writer, args)["structuredContent"]["result"]
        assert b.call(reader, {param: hexwkb}).get("isError") is not True, writer
        for _ in range(150):
            m = list(hexwkb)
            for _ in range(rng.randint(1, 3)):
                i = rng.randrange(2, len(m) + 1)
                op = rng.randrange(3)
                if op == 0 and len(m) > 4:
                    m = m[: max(i, 4)]
                elif op == 1 and i < len(m):
                    m[i] = rng.choice("0123456789ABCDEF")
                else:
                    m[i:i] = rng.choice(["00", "FF", "0F"])
            mutated = "".join(m)[: len(m) // 2 * 2]
            result = b.call(reader, {param: mutated})
            assert result.get("isError") or "result" in result["structuredContent"]
    assert b.close() == 0
