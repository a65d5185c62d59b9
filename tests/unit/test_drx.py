"""ibcloud.host.drx: Algorithm 4 and DCCR through the binding, bad input
included (the Rust tests cover the algorithms themselves)."""

import pytest

from ibcloud.host.drx import configure_workloads, dccr


def _w(name, g, io_min, priority, links=(0,)):
    return dict(name=name, g=g, io_min=io_min, priority=priority, links=list(links))


def test_per_link_and_strict_options():
    ws = [_w("hp1", 120, 10, "high", [0]), _w("hp2", 30, 10, "high", [0, 1])]
    assert configure_workloads(ws, [100.0, 100.0])["ss"] == ["hp1", "hp2"]
    c = configure_workloads(ws, [100.0, 100.0], capacity="per-link")
    assert c["evicted"] == ["hp2", "hp1"] and c["ss"] == []
    eq = [_w("hp", 80, 10, "high"), _w("lp", 50, 20, "low")]
    assert configure_workloads(eq, [100.0])["ss"] == ["hp"]
    assert configure_workloads(eq, [100.0], comparison="strict")["ss"] == []


@pytest.mark.parametrize("kwargs, match", [
    (dict(eviction="fixed"), "eviction: expected one of as-written, repaired"),
    (dict(capacity="max"), "capacity"),
])
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        configure_workloads([_w("a", 1, 0, "high")], [10.0], **kwargs)


def test_bad_workloads():
    with pytest.raises(ValueError, match="workload 'a': alpha"):
        configure_workloads([dict(name="a", g=1, io_min=0, alpha=2.0, priority="high")], [10.0])
    with pytest.raises(ValueError, match="workload 'p': priority: expected one of high, low"):
        configure_workloads([_w("p", 1, 0, "urgent")], [10.0])
    with pytest.raises(ValueError, match="unknown keys"):
        configure_workloads([dict(name="a", g=1, gg=2)], [10.0])
    with pytest.raises(ValueError, match="workload 'n': g must be"):
        configure_workloads([_w("n", float("nan"), 0, "high")], [10.0])
    with pytest.raises(ValueError, match="unsatisfiable.*l1"):
        configure_workloads([_w("l1", 90, 80, "low")], [50.0])


def test_dccr_own_and_errors():
    vms = {"n0": "A", "n1": "A", "h0": "A"}
    vmes = {"nectere": ["n0", "n1"], "hadoop": ["h0"]}
    assert dccr("n0", vms, vmes) == ["hadoop"]
    assert dccr("n0", vms, vmes, include_own=True) == ["nectere", "hadoop"]
    with pytest.raises(ValueError, match="unknown VM 'zz'"):
        dccr("zz", vms, vmes)
    with pytest.raises(ValueError, match="two VMEs"):
        dccr("n0", vms, {"x": ["n0"], "y": ["n0"]})


def test_drx_records_as_a_dataframe_and_parquet(tmp_path):
    """`host run --out` of a DRX scenario writes its log as drx_records.parquet
    (names resolved), and the capping policies' table is not built from it."""
    import pandas as pd

    from ibcloud.host import run
    from ibcloud.host.layouts import layout

    r = run(layout("drx-symmetric", hosts=2, scale=0.02, policy="hb-dist", sla=1e9))
    d = r.drx_records()
    assert {"violation", "price", "cap", "epoch-reset"} <= set(d.kind)
    caps = d[d.kind == "cap"]
    assert caps.vm.str.contains("linpack|hadoop").all() and caps.cap.between(0, 100).all()
    assert r.policy_records().empty
    files = {p.name for p in r.write(tmp_path, plots=False)}
    assert "drx_records.parquet" in files and "policy_records.parquet" not in files
    assert len(pd.read_parquet(tmp_path / "drx_records.parquet")) == len(d)
