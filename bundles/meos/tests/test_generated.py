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
