"""The temporal count of a fleet through pymeos, for the node's make bench.

    bench_pymeos.py FLEET.json

FLEET.json holds the trajectories as MEOS text. For every line read on stdin,
the fleet is read with pymeos (TGeomPointSeq), counted with pymeos's
TemporalPeriodCountAggregator (MEOS's temporal_tcount_transfn, then
temporal_tagg_finalfn) and the count written as MEOS text, as the bundle's
meos.temporal_tcount_agg does in one call; one line answers each:
{"seconds": ..., "result": "..."}.
"""

from __future__ import annotations

import json
import sys
import time

from pymeos import TGeomPointSeq, pymeos_initialize
from pymeos.aggregators import TemporalPeriodCountAggregator
from pymeos_cffi import temporal_out

DIGITS = 15


def main() -> None:
    pymeos_initialize("UTC")
    with open(sys.argv[1], encoding="utf-8") as f:
        fleet = json.load(f)
    for _ in sys.stdin:
        start = time.perf_counter()
        count = TemporalPeriodCountAggregator.aggregate([TGeomPointSeq(t) for t in fleet])
        text = temporal_out(count._inner, DIGITS)
        seconds = time.perf_counter() - start
        sys.stdout.write(json.dumps({"seconds": seconds, "result": text}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
