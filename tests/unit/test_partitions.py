"""ibcloud.partitions and the partition commands: partitions.conf reading
and writing, the pftree engines through Python and the CLI, the validator,
and every kind of bad input (syntax errors with line and column, unknown and
overlapping members, too many partitions needing VLs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ibcloud import Fabric
from ibcloud.cli.main import main
from ibcloud.exceptions import ParseError, RoutingError
from ibcloud.partitions import (
    Partition,
    PartitionConfig,
    check,
    contention,
    interference,
    leaf_nodes,
    learn_weights,
    read_weights,
    route,
    victim_delays,
)

SPEC = "XGFT(2;8,4;1,4)"


@pytest.fixture(scope="module")
def fabric() -> Fabric:
    return Fabric.generate(SPEC)


def _conf(fabric: Fabric, t2: str = "vlane", t3: str = "vlane", glob: str = "strict") -> PartitionConfig:
    leaves = leaf_nodes(fabric)
    return PartitionConfig.build([
        Partition("Default", 0x7FFF, None, None, [("ALL", "full")]),
        Partition("victims", 1, "phy", None, [(hex(g), "full") for leaf in leaves for _, g in leaf[:2]]),
        Partition("t2", 2, t2, None, [(hex(g), "full") for leaf in leaves for _, g in leaf[2:5]]),
        Partition("t3", 3, t3, None, [(hex(g), "full") for leaf in leaves for _, g in leaf[5:]]),
    ], global_isolation=glob)


@pytest.mark.parametrize("text, line, column, problem", [
    ("a=0x1 0x10 ;", 1, 1, "no partition definition found"),
    ("# c\n\n  b=0x2, , ipoib : ALL ;", 3, 10, "bad partition flags"),
    ("c=0x1g : ALL ;", 1, 3, "bad partition definition"),
    ("d=1 :\n  0x10=full,\n  zz ;", 3, 3, "bad PortGUID"),
    ("e=1, isolation=walls : ALL ;", 1, 6, "unknown isolation policy"),
    ("Default=0x7fff, global_isolation=sometimes : ALL ;", 1, 17, "unknown global isolation"),
])
def test_syntax_errors_name_line_and_column(text: str, line: int, column: int, problem: str) -> None:
    with pytest.raises(ParseError) as err:
        PartitionConfig.parse(text, "p.conf")
    assert str(err.value).startswith(f"p.conf:{line}:{column}: {problem}"), str(err.value)


def test_cli_parse_reports_errors_with_status_2(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.conf"
    bad.write_text("Default=0x7fff : ALL ;\ngold=0x10 0x20 ;\n")
    assert main(["partitions", "parse", str(bad)]) == 2
    assert f"{bad}:2:1: no partition definition found" in capsys.readouterr().err
    good = tmp_path / "good.conf"
    good.write_text("Default=0x7fff : ALL ;\ngold=0x10, isolation=phy, frob : 0x20=full ;\n")
    assert main(["partitions", "parse", str(good), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p["isolation"] for p in out["partitions"]] == ["-", "phy"]
    assert out["warnings"] == [f"{good}:line 2:27: unrecognized partition flag 'frob' - ignored"]


def test_write_read_round_trip_keeps_policies(fabric: Fabric, tmp_path: Path) -> None:
    conf = _conf(fabric)
    conf.write(tmp_path / "p.conf")
    back = PartitionConfig.read(tmp_path / "p.conf")
    assert back.global_isolation == "strict"
    assert [(p.name, p.pkey, p.isolation, len(p.members)) for p in back.partitions] == [
        (p.name, p.pkey, p.isolation, len(p.members)) for p in conf.partitions
    ]


def test_unknown_and_overlapping_members(fabric: Fabric) -> None:
    leaves = leaf_nodes(fabric)
    g = hex(leaves[0][0][1])
    unknown = PartitionConfig.build([Partition("a", 1, "phy", None, [(g, "full"), ("0xdead", "full")])])
    with pytest.raises(RoutingError, match="0x000000000000dead is not an end port"):
        route(fabric, "pftree-ext", unknown, isolation="strict")
    r = route(fabric, "pftree-ext", unknown, isolation="best-effort")
    assert any("skipped" in w for w in r.warnings)
    overlap = PartitionConfig.build([
        Partition("a", 1, None, None, [(g, "full"), (hex(leaves[1][0][1]), "full")]),
        Partition("b", 2, None, None, [(g, "full"), (hex(leaves[2][0][1]), "full")]),
    ])
    with pytest.raises(RoutingError, match="member of both 'a' and 'b'"):
        route(fabric, "pftree-ext", overlap, isolation="strict")
    assert any("member of both" in w for w in route(fabric, "pftree-ext", overlap).warnings)


def test_vl_shortage_strict_fails_best_effort_wraps(fabric: Fabric) -> None:
    leaves = leaf_nodes(fabric)
    parts = [Partition(f"p{k}", k + 1, "vlane", None, [(hex(leaf[k][1]), "full") for leaf in leaves]) for k in range(8)]
    conf = PartitionConfig.build(parts)
    with pytest.raises(RoutingError, match="all 2 data VLs are in use"):
        route(fabric, "pftree-ext", conf, isolation="strict", max_vls=2)
    r = route(fabric, "pftree-ext", conf, isolation="best-effort", max_vls=2)
    assert any("wraps around to VL1" in w for w in r.warnings)
    assert set(r.vls) <= {0, 1}
    assert all(p["ok"] for p in route(fabric, "pftree-ext", conf, max_vls=8).report["partitions"])


def test_phy_partition_is_isolated_and_checked(fabric: Fabric) -> None:
    conf = _conf(fabric)
    r = route(fabric, "pftree-ext", conf)
    frame = r.frame()
    assert frame.loc[frame.partition == "victims", "shared_links"].item() == 0
    assert frame["ok"].all()
    # The same validator on partition-oblivious ftree: the phy victims share links.
    from ibcloud.routing import route as plain_route

    report, _ = check(plain_route(fabric, "ftree").tables, conf)
    assert any(v.startswith("partition 'victims'") for v in report["violations"])
    # Our own tables pass it with the VLs the engine assigned.
    report, _ = check(r.tables, conf, vls=r.vls)
    assert report["violations"] == []


def test_variants_are_labelled(fabric: Fabric) -> None:
    conf = _conf(fabric)
    assert route(fabric, "pftree-ext", conf, variant="literal").variant == "literal"
    assert route(fabric, "pftree-ext", conf, variant=["leaf-by-leaf", "vl-for-def"]).variant == "leaf-by-leaf+vl-for-def"
    with pytest.raises(ValueError, match="unknown pftree variant switch"):
        route(fabric, "pftree-ext", conf, variant="sideways")


def test_weights_file_learning_and_wt_engine(fabric: Fabric, tmp_path: Path) -> None:
    w = tmp_path / "weights"
    w.write_text("0x10 1\n0x11 nan\n")
    with pytest.raises(ParseError, match="weights:2: bad weight 'nan'"):
        read_weights(w)
    assert learn_weights([(1, 2.0), (2, 4.0)], literal=True) == [(1, 50.5), (2, 149.5)]
    leaves = leaf_nodes(fabric)
    receivers = [g for leaf in leaves for _, g in leaf[:4]]
    r = route(fabric, "pftree-wt", _conf(fabric), weights=[(g, 100.0) for g in receivers])
    lids = [lid for leaf in leaves for lid, _ in leaf]
    recv_pos = [i for i, (_, g) in enumerate(x for leaf in leaves for x in leaf) if g in receivers]
    assert contention(r.tables, lids, recv_pos)["down"] == 0


def test_victim_delay_and_interference(fabric: Fabric) -> None:
    conf = _conf(fabric, t2="def", t3="def")
    r = route(fabric, "pftree-ext", conf)
    leaves = leaf_nodes(fabric)
    v = [lid for leaf in leaves for lid, _ in leaf[:2]]
    o = [lid for leaf in leaves for lid, _ in leaf[2:]]
    quiet = victim_delays(r.tables, v, "bisect", o, "null", runs=10)
    noisy = victim_delays(r.tables, v, "bisect", o, "shift", runs=10)
    assert quiet == noisy
    labels = [0] * len(v) + [1] * len(o)
    assert interference(r.tables, v + o, labels)["flow_pairs"] == 0


def test_cli_route_and_check(fabric: Fabric, tmp_path: Path, capsys) -> None:
    conf = tmp_path / "partitions.conf"
    _conf(fabric).write(conf)
    qos = tmp_path / "qos"
    args = ["route", SPEC, "--engine", "pftree-ext", "--partitions", str(conf), "--qos-dir", str(qos),
            "-o", str(tmp_path / "t.dump"), "--path-sls", str(tmp_path / "sls.dump"), "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["variant"] == "corrected" and out["violations"] == []
    written = sorted(p.name for p in qos.iterdir() if p.name != ".ibcloud-out.json")  # (the folder's owner mark)
    assert written == ["opensm-qos.conf", "partitions.conf", "qos-policy.conf"]
    assert main(["partitions", "check", SPEC, "--partitions", str(conf), "--lfts", str(tmp_path / "t.dump"),
                 "--path-sls", str(tmp_path / "sls.dump")]) == 0
    capsys.readouterr()
    assert main(["partitions", "check", SPEC, "--partitions", str(conf), "--route", "ftree", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["violations"]
    assert main(["route", SPEC, "--engine", "ftree", "--partitions", str(conf)]) == 2
    three_phy = tmp_path / "phy.conf"
    leaves = leaf_nodes(fabric)
    PartitionConfig.build([Partition(f"p{k}", k + 1, "phy", None, [(hex(leaf[k][1]), "full") for leaf in leaves])
                           for k in range(5)]).write(three_phy)
    assert main(["route", SPEC, "--engine", "pftree-ext", "--partitions", str(three_phy), "--isolation", "strict"]) == 2
    assert "strict isolation" in capsys.readouterr().err


def test_grouped_reading_shares_root_ports_and_random_placement_is_labelled() -> None:
    """The grouped reading (reproduction's cause finding): a victim's root port carries max - 1 noise nodes,
    so Table 4's 128-node gather maximum, 1 x 84 + 28 = 112, comes out exactly; Alg. 2 (corrected) isolates."""
    import random

    from ibcloud.pftree.reproduction import _config, _draw

    f = Fabric.generate("XGFT(2;16,8;1,8)")
    victims, others, _ = _draw(f, random.Random(3))
    conf = _config(victims, others)
    v = [lid for lid, _ in victims]
    o = [lid for lid, _ in others]
    grouped = route(f, "pftree", conf, variant="grouped")
    assert grouped.variant == "grouped"
    assert max(victim_delays(grouped.tables, v, "gather", o, "shift", runs=4)) == 112
    assert max(victim_delays(route(f, "pftree", conf).tables, v, "gather", o, "shift", runs=4)) == 31
    rv, ro, _ = _draw(f, random.Random(3), "random")
    assert len(rv) == 32 and len(ro) == 96
    with pytest.raises(ValueError, match="placement"):
        _draw(f, random.Random(3), "clustered")
