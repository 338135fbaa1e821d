"""Every aggregate tool with a state grown past MEOS's first allocation, in a
bundle whose fresh heap memory is never zero.

MEOS 1.3 starts a skip list with room for 1,024 elements and grows it with
realloc, leaving the key of each element past those uninitialised; its
skiplist_free then frees whatever that key holds. Where the grown memory
happens to be zero nothing shows; after other calls have dirtied the heap
(a 2,000-sequence count before a 5,000-instant one) the bundle died of
SIGSEGV. glibc's MALLOC_PERTURB_ fills every fresh allocation, and a high
MALLOC_MMAP_THRESHOLD_ keeps the grown state on the heap, so that a few
thousand values show it in a fresh process, every time.
"""

import json
import os
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from bundle_client import Bundle

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "..", "build", "gen", "manifest.json")

# Past the 1,024 elements MEOS allocates first (two of them head and tail).
N = 1100
DIRTY_HEAP = {"MALLOC_PERTURB_": "90", "MALLOC_MMAP_THRESHOLD_": "33554432"}
T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


def ts(i: int, extra: int = 0) -> str:
    """The i-th time, two seconds apart, extra seconds later."""
    return (T0 + timedelta(seconds=2 * i + extra)).strftime("%Y-%m-%d %H:%M:%S+00")


def period(i: int) -> str:
    return f"[{ts(i)}, {ts(i, 1)}]"


# The i-th value of each aggregate tool, by the start of its name: apart in
# time (or value) from every other, so that each is an element of its own.
VALUES: list[tuple[str, Callable[[int], object]]] = [
    ("bigint_", lambda i: i),
    ("int_", lambda i: i),
    ("float_", lambda i: i + 0.5),
    ("date_", lambda i: (T0 + timedelta(days=i)).strftime("%Y-%m-%d")),
    ("timestamptz_", ts),
    ("text_", lambda i: f"w{i}"),
    ("set_", lambda i: f"{{{i}}}"),
    ("spanset_", lambda i: f"{{[{2 * i}, {2 * i + 1})}}"),
    ("span_", lambda i: f"[{2 * i}, {2 * i + 1})"),
    ("tstzset_", lambda i: f"{{{ts(i)}}}"),
    ("tstzspanset_", lambda i: f"{{{period(i)}}}"),
    ("tstzspan_", period),
    ("tbool_", lambda i: f"t@{ts(i)}"),
    ("tfloat_", lambda i: f"{i}.5@{ts(i)}"),
    ("ttext_", lambda i: f'"w{i}"@{ts(i)}'),
    ("tint_", lambda i: f"{i}@{ts(i)}"),
    ("tnumber_", lambda i: f"{i}@{ts(i)}"),
    ("temporal_", lambda i: f"{i}@{ts(i)}"),
    ("geo_", lambda i: f"POINT({i} 0)"),
    ("tpoint_", lambda i: f"POINT({i} 0)@{ts(i)}"),
    ("tspatial_", lambda i: f"POINT({i} 0)@{ts(i)}"),
    ("npoint_", lambda i: f"NPoint(1, {i / N:.6f})"),
    ("tnpoint_", lambda i: f"NPoint(1, 0.5)@{ts(i)}"),
]


def aggregates() -> list[dict]:
    with open(MANIFEST, encoding="utf-8") as f:
        return [t for t in json.load(f) if t["mode"] == "aggregate"]


def arguments(tool: dict) -> dict:
    value = next(v for prefix, v in VALUES if tool["name"].startswith(prefix))
    # In reverse time order, as the reported crash had them.
    args: dict = {"values": [value(i) for i in reversed(range(N))]}
    if "interv" in tool["inputSchema"]["properties"]:
        args["interv"] = "00:00:01"
    return args


def test_every_aggregate_survives_a_state_grown_past_its_first_allocation() -> None:
    tools = aggregates()
    assert len(tools) > 40, "the generated aggregates are missing from the manifest"
    skiplists = [t["name"] for t in tools if "SkipList *state" in t["prototype"]]
    assert len(skiplists) >= 20, skiplists
    died, failed = [], {}
    bundle = Bundle(env=DIRTY_HEAP)
    for tool in tools:
        try:
            result = bundle.call(tool["name"], arguments(tool))
        except RuntimeError as e:
            died.append(f"{tool['name']} ({e})")
            bundle = Bundle(env=DIRTY_HEAP)
            continue
        answer = result.get("structuredContent", {}).get("result")
        if result.get("isError") or not answer:
            failed[tool["name"]] = result["content"][0]["text"][:300]
        elif tool["name"] in skiplists and answer.count("@") < N:
            # Each value stays an instant, or a sequence, of its own.
            failed[tool["name"]] = f"{answer.count('@')} instants in the answer: {answer[:300]}"
    code = bundle.close()
    assert not died, "the bundle died in " + ", ".join(died)
    assert not failed, failed
    assert code == 0
