"""Subnet administration: the native wire codec, resolution and the CLI."""

from __future__ import annotations

import json

import pytest

from ibcloud import Fabric, _native, route
from ibcloud.cli.main import main
from ibcloud.exceptions import SaError
from ibcloud.sa import expected_answers
from ibcloud.sa.flood import FloodStats


def test_query_mad_layout() -> None:
    mad = _native.sa_get_path_mad(0x1234, 5, 9)
    assert len(mad) == 256
    assert mad[:4] == bytes([1, 3, 2, 1])  # base version, SA class, class version 2, Get
    assert mad[16:18] == b"\x00\x35"  # PathRecord
    assert mad[48:56] == (0x30).to_bytes(8, "big")  # DLID | SLID
    assert mad[96:100] == bytes([0, 9, 0, 5])


def test_response_parse_reads_every_checked_field() -> None:
    mad = bytearray(_native.sa_get_path_mad(7, 5, 9))
    mad[3] = 0x81
    mad[56:120] = _native.sa_path_record_bytes(5, 9, sl=3, mtu=4, rate=16, caching=True)
    method, status, tid, slid, dlid, sl, mtu, rate, caching, life = _native.sa_parse_mad(bytes(mad))
    assert (method, status, tid, slid, dlid, sl, mtu, rate, caching, life) == (0x81, 0, 7, 5, 9, 3, 4, 16, True, 18)
    assert mad[56 + 44] & 0x40  # bit 353


@pytest.mark.parametrize("cut", [0, 10, 119])
def test_short_mads_raise_sa_error(cut: int) -> None:
    with pytest.raises(SaError, match="too short"):
        _native.sa_parse_mad(_native.sa_get_path_mad(1, 1, 2)[:cut])


def test_wrong_class_raises_sa_error() -> None:
    mad = bytearray(_native.sa_get_path_mad(1, 1, 2))
    mad[1] = 0x81
    with pytest.raises(SaError, match="not SA"):
        _native.sa_parse_mad(bytes(mad))


def test_resolution_of_every_pair_on_a_routed_tree() -> None:
    f = Fabric.generate("4-ary-2-full")
    t = route(f, "ftree").tables
    lids = sorted(n["lid"] for n in f.nodes() if n["kind"] == "ca")
    ans, bad = expected_answers(t, [(a, b) for a in lids for b in lids])
    assert bad == [] and len(ans) == len(lids) ** 2
    assert set(ans.values()) == {(0, 4, 7)}
    ans, bad = expected_answers(t, [(lids[0], 999)])
    assert ans == {} and "999" in bad[0]


def test_cli_resolve_json_and_bad_pairs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sa", "resolve", "4-ary-2-full", "--route", "minhop", "1", "32", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["rate_gbps"] == 40 and rows[0]["mtu"] == 2048 and rows[0]["hops_forward"] >= 2
    assert main(["sa", "resolve", "4-ary-2-full", "--route", "minhop", "1", "999"]) == 1
    assert main(["sa", "resolve", "4-ary-2-full", "--route", "minhop", "1"]) == 2


def test_flood_stats_percentiles() -> None:
    s = FloodStats(window=1, duration=2.0, answered=5, answered_in_window=4, latencies_us=[5, 1, 4, 2, 3])
    out = s.summary()
    assert out["qps"] == 2.0 and out["p50_us"] == 3 and out["max_us"] == 5 and out["mean_us"] == 3
