"""The MEOS bundle, run as a real process and driven over pipes."""

import json
import os
import re
import shutil
import subprocess

import pytest

from bundle_client import Bundle, arguments_of, check_answer, load_cases

FIXTURES, CASES = load_cases()
README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")
MANIFEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "gen", "manifest.json")


def list_all(bundle):
    """Every tool, following the pages of tools/list."""
    tools, params = [], {}
    while True:
        page = bundle.request("tools/list", params)
        tools += page["tools"]
        if not page.get("nextCursor"):
            return tools
        params = {"cursor": page["nextCursor"]}


def test_initialize_names_the_bundle(bundle):
    assert bundle.info["serverInfo"]["name"] == "toolnode-meos"
    assert bundle.info["protocolVersion"] == "2025-11-25"


def test_every_tool_is_listed_tested_and_documented(bundle):
    tools = list_all(bundle)
    curated = [t for t in tools if not t["_meta"]["io.toolnode/meos"]["generated"]]
    generated = [t for t in tools if t not in curated]
    with open(MANIFEST, encoding="utf-8") as f:
        manifest = json.load(f)
    assert len(curated) == 20  # with view_tracks, which the trajectory view calls
    assert [t["name"] for t in generated] == [m["name"] for m in manifest]
    by_name = {m["name"]: m for m in manifest}
    for tool in generated:
        # The category of docs/functions.md, for clients and the node's search to filter by.
        assert tool["_meta"]["io.toolnode/category"] == by_name[tool["name"]]["category"]
        assert tool["_meta"]["io.toolnode/meos"]["function"] == by_name[tool["name"]]["function"]
        schema = tool["inputSchema"]
        assert schema["additionalProperties"] is False
        assert sorted(schema["required"]) == sorted(schema["properties"])
        assert tool["outputSchema"]["required"] == ["result"]
        assert tool["annotations"]["readOnlyHint"] is True
    tools = curated
    with open(README, encoding="utf-8") as f:
        readme = f.read()
    categories = {m["category"] for m in manifest}
    for tool in tools:
        assert tool["_meta"]["io.toolnode/category"] in categories
        assert tool["description"] and tool["inputSchema"]["type"] == "object"
        assert tool["annotations"]["readOnlyHint"] is True
        assert any(c["tool"] == tool["name"] for c in CASES), f"no case calls {tool['name']}"
        assert f"### meos.{tool['name']}" in readme, f"README does not document {tool['name']}"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(bundle, case):
    check_answer(case, bundle.call(case["tool"], arguments_of(case, FIXTURES)))


def test_bundle_survives_every_error(bundle):
    good = next(c for c in CASES if c["name"] == "length of a 3-4-5 segment")
    errors = [c for c in CASES if "error" in c["expect"]]
    assert len(errors) > 30
    for case in errors:
        check_answer(case, bundle.call(case["tool"], arguments_of(case, FIXTURES)))
        check_answer(good, bundle.call(good["tool"], arguments_of(good, FIXTURES)))


def test_pipelined_calls_are_answered_in_full(bundle):
    good = next(c for c in CASES if c["name"] == "crossing points")
    bad = next(c for c in CASES if c["name"] == "unreadable timestamp")
    sent = {}
    for i in range(16):
        case = good if i % 2 else bad
        sent[bundle.send_request("tools/call", {"name": case["tool"], "arguments": arguments_of(case, FIXTURES)})] = case
    for _ in range(16):
        answer = bundle.receive()
        check_answer(sent.pop(answer["id"]), answer["result"])
    assert not sent


def test_hexwkb_round_trip(bundle):
    p = FIXTURES["WGS84"]
    hexwkb = bundle.call("convert", {"point": p, "format": "hexwkb"})["content"][0]["text"]
    back = bundle.call("convert", {"point": hexwkb})["content"][0]["text"]
    assert back == bundle.call("convert", {"point": p})["content"][0]["text"]
    assert back.startswith("SRID=4326;")


def test_unknown_tool_is_a_protocol_error(bundle):
    bundle.send_request("tools/call", {"name": "nope", "arguments": {}})
    answer = bundle.receive()
    assert answer["error"]["code"] == -32602 and "nope" in answer["error"]["message"]


VALGRIND = [
    "valgrind",
    "--error-exitcode=99",
    "--errors-for-leak-kinds=definite",
    "--track-origins=yes",
    "--quiet",
]


def run_under_valgrind(cases, rounds, leak_check):
    """Runs the cases `rounds` times through one bundle under valgrind;
    returns valgrind's report."""
    b = Bundle(prefix=[*VALGRIND, f"--leak-check={leak_check}"], stderr=subprocess.PIPE)
    calls = 0
    for _ in range(rounds):
        for case in cases:
            check_answer(case, b.call(case["tool"], arguments_of(case, FIXTURES)))
            calls += 1
    b.proc.stdin.close()
    report = b.proc.stderr.read()
    code = b.proc.wait(timeout=300)
    assert code == 0, f"valgrind found errors after {calls} calls:\n{report[-6000:]}"
    return calls, report


@pytest.mark.skipif(not shutil.which("valgrind"), reason="valgrind is not installed")
def test_no_leaks_or_memory_errors_under_valgrind():
    # The size-limit cases are left out only to keep the run short.
    clean = [c for c in CASES if "leaks" not in c and "pad" not in c]
    calls, report = run_under_valgrind(clean, 3, "full")
    assert calls >= 300
    assert "definitely lost" not in report


@pytest.mark.skipif(not shutil.which("valgrind"), reason="valgrind is not installed")
def test_no_memory_errors_where_meos_leaks():
    # These leak inside MEOS (see each case's "leaks"): check everything else.
    leaky = [c for c in CASES if "leaks" in c]
    assert leaky
    run_under_valgrind(leaky, 3, "no")


def test_protocol_stdout_stays_clean():
    """Whatever MEOS prints (PROJ notices, the aborted call's message) goes
    to stderr, never into the protocol stream."""
    b = Bundle(stderr=subprocess.PIPE)
    bowtie = next(c for c in CASES if c["name"] == "self-intersecting polygon")
    check_answer(bowtie, b.call(bowtie["tool"], arguments_of(bowtie, FIXTURES)))
    b.proc.stdin.close()
    rest = b.proc.stdout.read()
    assert rest == "", rest
    assert "Self-intersection" in b.proc.stderr.read()
    assert b.proc.wait(timeout=30) == 0


def test_missing_data_is_reported_at_start(tmp_path):
    """A copy of the binary whose libmeos has no wheel data beside it says what to do.
    The bundle finds the data from where libmeos was loaded: here a folder linked to the
    wheel's libraries, outside the wheel."""
    binary = tmp_path / "meos-bundle"
    shutil.copy(os.path.join(os.path.dirname(__file__), "..", "build", "meos-bundle"), binary)
    libs = tmp_path / "lib" / "pymeos_cffi.libs"
    libs.parent.mkdir()
    libs.symlink_to(os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "build", "pymeos", "pymeos_cffi.libs")))
    env = dict(os.environ, LD_LIBRARY_PATH=str(libs))
    proc = subprocess.run([str(binary)], input="", capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 1
    assert re.search(r"missing its data; run make in bundles/meos", proc.stderr), proc.stderr
    assert proc.stdout == ""


def network_tool_names():
    with open(MANIFEST, encoding="utf-8") as f:
        return {m["name"] for m in json.load(f) if m["network"]}


ROUTE_1 = "1,01020000202C160000020000000000000000000000000000000000000000000000000059400000000000000000"
POINT_3857 = "2,0101000020110F000000000000000000000000000000000000"


@pytest.mark.parametrize("content, reason", [
    (None, "MEOS_WAYS names no ways file"),
    ("gid,the_geom\n" + ROUTE_1 + "\n", "line 1: expected gid,HexEWKB with gid a whole number"),
    ("1,LINESTRING(0 0,1 1)\n", "line 1: the geometry must be HexEWKB"),
    (ROUTE_1 + "\n" + POINT_3857 + "\n", "line 2: the geometry is not a non-empty linestring"),
    ("", "holds no routes"),
    ("missing", "cannot open"),
], ids=["unset", "header", "wkt", "point", "empty", "missing"])
def test_network_tools_need_a_good_ways_file(tmp_path, content, reason):
    """Without a road network the network-point tools are absent, the reason on stderr,
    and the others are there; MEOS never reads a file it would loop on or crash on."""
    ways = None
    if content == "missing":
        ways = str(tmp_path / "nowhere.csv")
    elif content is not None:
        ways = tmp_path / "ways.csv"
        ways.write_text(content)
    b = Bundle(ways=ways and str(ways), stderr=subprocess.PIPE)
    names = {t["name"] for t in list_all(b)}
    assert "describe" in names and "tfloat_tsum_agg" in names
    assert not names & network_tool_names()
    b.proc.stdin.close()
    log = b.proc.stderr.read()
    assert b.proc.wait(timeout=30) == 0
    assert "the network-point tools are left out" in log and reason in log, log


def test_network_tools_with_the_test_network(bundle):
    names = {t["name"] for t in list_all(bundle)}
    assert network_tool_names() <= names and len(network_tool_names()) > 90
