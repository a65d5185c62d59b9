"""Fabric queries: node and link tables, pandas frames, summaries, ranks."""

import pandas as pd
import pytest

from ibcloud import Fabric


@pytest.fixture(scope="module")
def ft648() -> Fabric:
    return Fabric.generate("ft648")


def test_nodes_table(ft648):
    nodes = ft648.nodes()
    assert len(nodes) == ft648.num_nodes == 702
    assert list(nodes[0]) == ["id", "kind", "guid", "description", "num_ports", "rank", "lid"]
    assert [n["id"] for n in nodes] == list(range(702))
    cas = [n for n in nodes if n["kind"] == "ca"]
    switches = [n for n in nodes if n["kind"] == "switch"]
    assert len(cas) == 648 and len(switches) == 54
    assert all(n["rank"] is None and n["num_ports"] == 1 for n in cas)
    assert {n["rank"] for n in switches} == {0, 1}
    assert sorted(n["lid"] for n in nodes) == list(range(1, 703))
    assert len({n["guid"] for n in nodes}) == 702


def test_links_table(ft648):
    links = ft648.links()
    assert len(links) == ft648.num_links == 648 + 36 * 18
    assert all((link["node_a"], link["port_a"]) < (link["node_b"], link["port_b"]) for link in links)
    kinds = [n["kind"] for n in ft648.nodes()]
    ca_links = [link for link in links if "ca" in (kinds[link["node_a"]], kinds[link["node_b"]])]
    assert len(ca_links) == 648
    assert {link["rate"] for link in links} == {"4xQDR"}


def test_pandas_frames(ft648):
    nodes = ft648.to_pandas()
    assert list(nodes.columns) == ["id", "kind", "guid", "description", "num_ports", "rank", "lid"]
    assert str(nodes["rank"].dtype) == "Int64" and nodes["rank"].isna().sum() == 648
    assert nodes["guid"].dtype == "uint64"
    links = ft648.to_pandas("links")
    joined = links.merge(nodes, left_on="node_b", right_on="id")
    assert (joined["kind"] == "switch").all()
    with pytest.raises(ValueError, match="table"):
        ft648.to_pandas("ports")
    assert isinstance(nodes, pd.DataFrame)


def test_summary(ft648):
    s = ft648.summary()
    assert (s["cas"], s["switches"], s["routers"], s["links"]) == (648, 54, 0, 1296)
    assert (s["lids_used"], s["max_lid"], s["lft_blocks_per_switch"], s["full_lft_smps"]) == (702, 702, 11, 594)
    assert s["levels"] == [
        {"rank": 0, "switches": 18, "radix": [36, 36], "switch_links": [36, 36], "ca_links": [0, 0]},
        {"rank": 1, "switches": 36, "radix": [36, 36], "switch_links": [18, 18], "ca_links": [18, 18]},
    ]
    assert s["link_rates"] == {"4xQDR": 1296}


def test_inferred_ranks_match_the_generated_ones():
    fabric = Fabric.generate("ft11664")
    generated = [n["rank"] for n in fabric.nodes()]
    fabric.infer_ranks()
    assert fabric.ranked
    assert [n["rank"] for n in fabric.nodes()] == generated


def test_equality_and_difference():
    a, b = Fabric.generate("ft324"), Fabric.generate("ft324")
    assert a == b and a.topology_difference(b) is None
    b.assign_lids(lmc=1)
    assert a != b, "LIDs differ"
    assert a.topology_difference(b) is None, "the topology does not"
    c, report = a.inject_faults(switches=1, seed=5)
    assert a.topology_difference(c) == "360 nodes vs 359"
    assert a != Fabric.generate("ft648")
    assert repr(a) == "Fabric(cas=324, switches=36, routers=0, links=648, max_lid=360)"
