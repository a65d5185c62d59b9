"""Generated fat-trees: the counts of the reference papers, spec parsing,
LIDs, faults, and properties that hold for any small XGFT/PGFT."""

from math import prod

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibcloud import Fabric, FatTreeParams, LidError, TopologyError, presets

# name, CAs, switches, LFT blocks per switch (Paper II Table I for the 36-port trees)
PAPER_TREES = [
    ("ft324", 324, 36, 6),
    ("ft648", 648, 54, 11),
    ("ft5832", 5832, 972, 107),
    ("ft11664", 11664, 1620, 208),
    ("ft20736", 20736, 6912, None),
    ("ft27648", 27648, 2880, None),
]

# Paper V Table 4, in its roots-first notation: name, m, w, CAs, switches.
PAPER_V_TABLE_4 = [
    ("4-ary-2-full", [8, 4], [4, 1], 32, 12),
    ("8-ary-2", [8, 8], [8, 1], 64, 16),
    ("4-ary-3-full", [8, 4, 4], [4, 4, 1], 128, 80),
    ("16-ary-2", [16, 16], [16, 1], 256, 32),
    ("8-ary-3", [8, 8, 8], [8, 8, 1], 512, 192),
    ("8-ary-3-full", [16, 8, 8], [8, 8, 1], 1024, 320),
]


@pytest.mark.parametrize(("name", "cas", "switches", "blocks"), PAPER_TREES)
def test_paper_trees_have_the_published_counts(name, cas, switches, blocks):
    fabric = Fabric.generate(name)
    assert (fabric.num_cas, fabric.num_switches, fabric.num_routers) == (cas, switches, 0)
    assert fabric.max_lid == cas + switches  # packed LIDs, LMC 0
    if blocks is not None:
        assert fabric.lft_blocks == blocks
        assert fabric.summary()["full_lft_smps"] == switches * blocks


def test_ft20736_is_the_12_ary_4_tree():
    tree = FatTreeParams.parse("ft20736")
    assert tree == FatTreeParams.k_ary_n_tree(12, 4) == FatTreeParams.parse("12-ary-4")
    levels = Fabric.generate("ft20736").summary()["levels"]
    assert [(lvl["rank"], lvl["switches"]) for lvl in levels] == [(0, 1728), (1, 1728), (2, 1728), (3, 1728)]
    assert all(lvl["radix"] == [24, 24] for lvl in levels)


@pytest.mark.parametrize(("name", "m", "w", "cas", "switches"), PAPER_V_TABLE_4)
def test_paper_v_table_4_trees(name, m, w, cas, switches):
    params = FatTreeParams.from_roots_first(m, w)
    assert (params.num_compute_nodes, params.num_switches) == (cas, switches)
    assert params.m == list(reversed(m)) and params.w == list(reversed(w))
    preset = FatTreeParams.parse(name)
    assert (preset.m, preset.w) == (params.m, params.w)
    fabric = preset.build()
    assert (fabric.num_cas, fabric.num_switches) == (cas, switches)


def test_presets_list_is_complete_and_consistent():
    rows = presets()
    names = [p["name"] for p in rows]
    assert len(names) == len(set(names)) == 16
    for p in rows:
        params = FatTreeParams.parse(p["name"])
        assert str(params) == p["spec"]
        assert (params.num_compute_nodes, params.num_switches, params.radix) == (p["cas"], p["switches"], p["radix"])
        assert p["source"]


def test_spec_strings_round_trip():
    for spec in ["XGFT(3;4,4,3;1,2,3)", "PGFT(2;4,4;1,2;1,2)"]:
        assert str(FatTreeParams.parse(spec)) == spec
    assert FatTreeParams.parse(" xgft(2; 18,36; 1,18) ") == FatTreeParams.xgft([18, 36], [1, 18])
    assert FatTreeParams.parse("4-ary-3-tree").num_switches == 48


def test_radix_and_rate_reach_the_fabric():
    fabric = Fabric.generate("XGFT(2;4,4;1,4)", radix=36, rate="4xEDR")
    assert {n["num_ports"] for n in fabric.nodes() if n["kind"] == "switch"} == {36}
    assert fabric.summary()["link_rates"] == {"4xEDR": fabric.num_links}


@pytest.mark.parametrize(
    "spec",
    ["ft999", "XGFT(2;4,4;1)", "XGFT(2;4,x;1,2)", "XGFT(2;4,4;1,0)", "tree(2;1;1)", "0-ary-2", "XGFT(1;300;1)", ""],
)
def test_bad_specs_raise_topology_error(spec):
    with pytest.raises(TopologyError):
        Fabric.generate(spec)


def test_unknown_preset_names_the_known_ones():
    with pytest.raises(TopologyError, match="ft999.*ft648"):
        FatTreeParams.parse("ft999")


def test_bad_parameters_raise_topology_error():
    with pytest.raises(TopologyError, match="radix"):
        FatTreeParams.parse("ft648").with_radix(30)
    with pytest.raises(TopologyError):
        FatTreeParams.k_ary_n_tree(0, 3)
    with pytest.raises(TopologyError):
        FatTreeParams.k_ary_n_tree(4, 0)
    with pytest.raises(TopologyError, match="49151"):
        FatTreeParams.xgft([100, 100, 10], [1, 1, 1])
    with pytest.raises(TopologyError, match="QQR"):
        FatTreeParams.parse("ft324").with_rate("4xQQR")
    with pytest.raises(TopologyError, match="level 3"):
        FatTreeParams.parse("ft648").nodes_at_level(3)
    with pytest.raises(TopologyError):
        FatTreeParams.pgft([4, 4], [1, 2], [1])


def test_lmc_gives_aligned_ranges():
    fabric = Fabric.generate("4-ary-2-full")
    fabric.assign_lids(lmc=2)
    for node in fabric.nodes():
        if node["kind"] == "ca":
            assert node["lid"] % 4 == 0
    assert fabric.lids_in_use == 32 * 4 + 12
    fabric.assign_lids(lmc=2, lmc_esp0=True)
    assert fabric.lids_in_use == 44 * 4
    assert all(n["lid"] % 4 == 0 for n in fabric.nodes())


def test_opensm_policy_uses_the_same_lids_in_another_order():
    packed = Fabric.generate("ft324")
    opensm = Fabric.generate("ft324")
    opensm.assign_lids(policy="opensm")
    assert opensm.max_lid == opensm.lids_in_use == packed.max_lid
    lids = [n["lid"] for n in opensm.nodes()]
    assert sorted(lids) == list(range(1, 361))
    assert lids != [n["lid"] for n in packed.nodes()]


def test_lid_errors():
    fabric = Fabric.generate("ft324")
    with pytest.raises(LidError, match="LMC 8"):
        fabric.assign_lids(lmc=8)
    with pytest.raises(LidError, match="policy"):
        fabric.assign_lids(policy="random")
    big = Fabric.generate("ft11664")
    with pytest.raises(LidError, match="49151"):
        big.assign_lids(lmc=3)


def test_faults_are_reproducible_and_counted():
    fabric = Fabric.generate("ft648")
    a, report_a = fabric.inject_faults(links=10, switches=2, seed=42)
    b, report_b = fabric.inject_faults(links=10, switches=2, seed=42)
    c, report_c = fabric.inject_faults(links=10, switches=2, seed=43)
    assert a == b and report_a == report_b
    assert report_a != report_c
    assert a.num_switches == 52 and a.num_cas == 648
    assert len(report_a["links"]) == 10 and len(report_a["switches"]) == 2
    guids = {n["guid"] for n in a.nodes()}
    assert not guids & set(report_a["switches"])
    assert fabric.num_switches == 54, "the original is unchanged"


def test_too_many_faults_is_an_error():
    fabric = Fabric.generate("4-ary-2-full")
    with pytest.raises(TopologyError, match="switch-to-switch links"):
        fabric.inject_faults(links=33)
    with pytest.raises(TopologyError):
        fabric.inject_faults(switches=13)


@st.composite
def small_trees(draw):
    h = draw(st.integers(1, 3))
    m = draw(st.lists(st.integers(1, 6), min_size=h, max_size=h))
    w = draw(st.lists(st.integers(1, 4), min_size=h, max_size=h))
    p = draw(st.lists(st.integers(1, 2), min_size=h, max_size=h))
    return FatTreeParams.pgft(m, w, p)


@settings(max_examples=60, deadline=None)
@given(small_trees())
def test_any_small_pgft_matches_its_formulas(params):
    fabric = params.build()
    h = params.h
    assert fabric.num_cas == prod(params.m) == params.num_compute_nodes
    assert fabric.num_switches == params.num_switches == sum(params.nodes_at_level(i) for i in range(1, h + 1))
    links = sum(params.nodes_at_level(i) * params.w[i] * params.p[i] for i in range(h))
    assert fabric.num_links == links
    # One LID per switch, one per cabled CA port; packed from 1.
    assert fabric.lids_in_use == fabric.max_lid == fabric.num_switches + fabric.num_cas * params.ports_used(0)
    levels = fabric.summary()["levels"]
    assert [lvl["rank"] for lvl in levels] == list(range(h))
    for lvl in levels:
        level = h - lvl["rank"]
        assert lvl["switches"] == params.nodes_at_level(level)
        assert lvl["radix"] == [params.ports_used(level)] * 2


@settings(max_examples=30, deadline=None)
@given(small_trees(), st.integers(0, 2**64 - 1))
def test_faults_never_break_the_model(params, seed):
    fabric = params.build()
    switch_links = sum(params.nodes_at_level(i) * params.w[i] * params.p[i] for i in range(1, params.h))
    broken, report = fabric.inject_faults(links=switch_links // 2, seed=seed)
    assert broken.num_links == fabric.num_links - switch_links // 2
    assert len(report["links"]) == switch_links // 2
    # Ranks, LIDs and GUIDs survive; the result still summarises.
    assert broken.ranked and broken.max_lid == fabric.max_lid
    assert broken.summary()["links"] == broken.num_links


def test_opensm_policy_puts_the_sm_port_first_and_guid2lid_reports_it():
    fabric = Fabric.generate("ft324")
    sm = fabric.nodes()[5]["guid"] + 1  # port 1 of the sixth CA
    fabric.assign_lids(policy="opensm", sm_port_guid=sm)
    g2l = fabric.guid2lid()
    assert g2l[sm] == (1, 1)
    assert len(g2l) == 360 and sorted(lo for lo, _ in g2l.values()) == list(range(1, 361))
    with pytest.raises(LidError, match="no port with GUID"):
        fabric.assign_lids(policy="opensm", sm_port_guid=0xDEAD)
    with pytest.raises(LidError, match="opensm policy"):
        fabric.assign_lids(sm_port_guid=sm)


def test_copies_are_independent():
    fabric = Fabric.generate("ft324")
    copy = fabric.copy()
    copy.assign_lids(lmc=1)
    copy.infer_ranks()
    assert fabric.max_lid == 360 and copy.max_lid == 684
    assert fabric != copy and fabric.topology_difference(copy) is None
