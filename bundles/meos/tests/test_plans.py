"""The generator's decisions (gen/plan.py), held against snapshots: what a
sample of MEOS functions, one or more of every result mode, conversion and
reason of exclusion, becomes. A change of policy or planner that changes a
plan fails here, naming the function; when the change is meant, rewrite the
snapshots with

    build/venv/bin/python tests/test_plans.py --update

and read the diff of tests/data/plans.json before committing it."""

from __future__ import annotations

import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "gen"))

import emit  # noqa: E402
from plan import Excluded, Rules, parse_header, plan, plan_json  # noqa: E402

MEOS_H = os.path.join(ROOT, "build", "sdist", "pymeos_cffi-1.3.0", "builder", "meos.h")
POLICY = os.path.join(ROOT, "policy.toml")
SNAPSHOTS = os.path.join(HERE, "data", "plans.json")

# The sample: every result mode and what each writes, every conversion of a
# parameter, the policy's bounds, limits, statics and finals, and every kind
# of reason a function is left out for.
SAMPLE = [
    # value results, by family and scalar
    "tfloat_max_value", "span_lower_inc", "interval_cmp", "float_exp", "add_date_int",
    "add_timestamptz_interval", "add_interval_interval", "text_initcap", "bigint_to_set",
    "bigint_to_spanset", "float_timestamptz_to_tbox", "geo_timestamptz_to_stbox",
    "geompoint_make2d", "geogpoint_make2d", "npoint_make", "nsegment_make",
    "distance_bigintspan_bigintspan", "temporal_set_interp",
    # C strings: owned, static, with a hidden size, with a limited precision
    "date_out", "temporal_interp", "set_as_hexwkb", "float_round", "temporal_as_mfjson",
    # out parameters
    "bigintset_value_n", "dateset_value_n", "floatset_value_n", "textset_value_n",
    "tstzset_value_n", "tbox_tmax_inc", "geoset_value_n", "npointset_value_n",
    # arrays, contiguous or of pointers, and splits with their bins
    "tbool_values", "tint_values", "tfloat_values", "ttext_values", "temporal_timestamps",
    "temporal_instants", "geo_pointarr", "geo_stboxes", "tnpoint_positions",
    "set_split_each_n_spans", "tnumber_split_each_n_tboxes", "temporal_time_split",
    "tint_value_time_split", "tgeo_space_time_split",
    # bounded calls
    "bigintspan_bins", "stbox_space_time_tiles", "temporal_tsample",
    # aggregates: extents, unions with finals, skip lists, windows, scalars, text
    "bigint_extent_agg", "bigint_union_agg", "span_union_agg", "tnumber_extent_agg",
    "tspatial_extent_agg", "tbool_tand_agg", "tfloat_wmax_agg", "tnumber_tavg_agg",
    "text_union_agg", "timestamptz_union_agg",
    # excluded, by the policy and by the type rules
    "temporal_in", "meos_initialize", "set_round", "union_bigint_spanset", "ttext_at_value",
    "gbox_make", "gbox_out", "temporal_dyntimewarp_path", "date_to_timestamp", "route_geom",
    "py_error_handler", "tinstant_make",
]


def plans() -> dict[str, object]:
    """The sample's plans (a tool's name, or its transition function's for an
    aggregate), or the reason each is excluded."""
    funcs, enums = parse_header(MEOS_H)
    rules = Rules.load(POLICY, enums)
    wanted = {n[: -len("_agg")] + "_transfn" if n.endswith("_agg") else n for n in SAMPLE}
    out: dict[str, object] = {}
    for name, section, decl in funcs:
        if name not in wanted or name in out:
            continue
        try:
            out[name] = plan_json(plan(name, section, decl, rules))
        except Excluded as e:
            out[name] = {"excluded": str(e)}
    missing = wanted - set(out)
    assert not missing, f"not in the header: {sorted(missing)}"
    return {n: out[n] for n in sorted(out)}


@pytest.fixture(scope="module")
def current() -> dict[str, object]:
    if not os.path.exists(MEOS_H):
        pytest.skip(f"{MEOS_H} is missing: `make -C bundles/meos` fetches it")
    return plans()


def test_plans_match_their_snapshots(current: dict[str, object]) -> None:
    with open(SNAPSHOTS, encoding="utf-8") as f:
        want = json.load(f)
    assert sorted(current) == sorted(want), "the sample and the snapshots name other functions"
    for name in want:
        assert current[name] == want[name], (
            f"{name}: the plan changed\nwant {json.dumps(want[name], indent=1)}\n"
            f"got  {json.dumps(current[name], indent=1)}")


def test_the_sample_covers_every_result_mode(current: dict[str, object]) -> None:
    modes = {p["result"]["mode"] for p in current.values()  # type: ignore[index]
             if "excluded" not in p}  # type: ignore[operator]
    assert modes == set(emit.EMITTERS), "a result mode without an emitter, or unsampled"


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: test_plans.py --update (rewrites tests/data/plans.json)")
    with open(SNAPSHOTS, "w", encoding="utf-8") as f:
        json.dump(plans(), f, indent=1)
        f.write("\n")
