"""The aggregate tools at size: a fleet of 10,000 trajectories in one call,
answered as worked out here, and an array over the bound refused whole."""

import re
from datetime import datetime, timedelta, timezone

FLEET = 10_000
START = datetime(2025, 1, 1, 8, 0, tzinfo=timezone.utc)
TRIP = timedelta(minutes=30)


def departure(k: int) -> datetime:
    """Vehicle k leaves k % 60 minutes after 08:00 and drives for 30 minutes."""
    return START + timedelta(minutes=k % 60)


def fleet() -> list[str]:
    def at(t: datetime) -> str:
        return t.strftime("%Y-%m-%d %H:%M:%S+00")

    return [f"[POINT({k} 0)@{at(departure(k))}, POINT({k} 30)@{at(departure(k) + TRIP)}]"
            for k in range(FLEET)]


def moving_at(t: datetime) -> int:
    """How many vehicles are between departure and arrival at t (no one departs or
    arrives at the half minutes this is asked about)."""
    return sum(1 for k in range(FLEET) if departure(k) < t < departure(k) + TRIP)


SEQUENCE = re.compile(r"[\[(]([^\])]*)[\])]")
INSTANT = re.compile(r"(\d+)@([0-9-]+ [0-9:]+\+00)")


def step_value(answer: str, t: datetime) -> int | None:
    """The value at t of a step integer sequence set in MEOS text."""
    for seq in SEQUENCE.findall(answer):
        instants = [(int(v), datetime.strptime(ts, "%Y-%m-%d %H:%M:%S+00").replace(
            tzinfo=timezone.utc)) for v, ts in INSTANT.findall(seq)]
        if instants[0][1] <= t <= instants[-1][1]:
            return [v for v, ts in instants if ts <= t][-1]
    return None


def test_fleet_of_ten_thousand_counted_in_one_call(bundle):
    result = bundle.call("temporal_tcount_agg", {"values": fleet()})
    assert not result.get("isError"), result["content"][0]["text"][:400]
    answer = result["structuredContent"]["result"]
    for minute in range(0, 90, 7):
        t = START + timedelta(minutes=minute, seconds=30)
        assert step_value(answer, t) == moving_at(t), t


def test_fleet_extent_and_centroid_in_one_call(bundle):
    trips = fleet()
    extent = bundle.call("tspatial_extent_agg", {"values": trips})["structuredContent"]
    # x is the vehicle's number, y runs 0 to 30; the last one leaves at 08:59, back 09:29.
    assert extent["result"] == ("STBOX XT(((0,0),(9999,30)),"
                                "[2025-01-01 08:00:00+00, 2025-01-01 09:29:00+00])")
    centroid = bundle.call("tpoint_tcentroid_agg", {"values": trips})
    assert not centroid.get("isError")
    # At 08:00 only the vehicles k = 0, 60, ..., 9960 have left, all at y = 0: their
    # mean x is 60 * (0 + 1 + ... + 166) / 167 = 30 * 166 = 4980.
    assert centroid["structuredContent"]["result"].startswith(
        "{[POINT(4980 0)@2025-01-01 08:00:00+00")


def test_values_over_the_bound_are_refused_whole(bundle):
    result = bundle.call("int_union_agg", {"values": list(range(100_001))})
    assert result.get("isError")
    assert result["content"][0]["text"] == (
        'argument "values" holds 100001 values; an aggregate takes at most 100000 in one call')
    # At the bound, the same call is answered.
    ok = bundle.call("int_extent_agg", {"values": list(range(100_000))})
    assert ok["structuredContent"]["result"] == "[0, 100000)"


def test_the_bound_counts_instants_not_values(bundle):
    # Four values, but 120,000 instants: what a temporal aggregate costs grows with these.
    # The value alternates, so that MEOS's normalization keeps every instant.
    def sequence(k: int) -> str:
        return "[" + ", ".join(f"{k + s % 2}@{(START + timedelta(seconds=s)).strftime('%Y-%m-%d %H:%M:%S+00')}"
                               for s in range(30_000)) + "]"

    result = bundle.call("temporal_tcount_agg", {"values": [sequence(k) for k in range(4)]})
    assert result.get("isError")
    assert result["content"][0]["text"] == (
        'argument "values" holds 120000 instants in 4 values; an aggregate takes at most 100000 '
        "instants in one call")
    # Three of them, 90,000 instants, are answered.
    ok = bundle.call("temporal_tcount_agg", {"values": [sequence(k) for k in range(3)]})
    assert not ok.get("isError"), ok["content"][0]["text"][:300]
