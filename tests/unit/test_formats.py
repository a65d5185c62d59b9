"""Reading and writing fabric files: round trips through every writable
format, the interop fixtures, and bad input.

The round trips and fixture reads exercise the real parsers and writers of
crates/ibcloud-fabric/src/formats/."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibcloud import (
    Fabric,
    IbcloudError,
    InternalError,
    ParseError,
    UnsupportedError,
    format_name,
    formats,
    guess_format,
)

WRITABLE = [f["name"] for f in formats() if f["can_write"]]
TEXT_FORMATS = ["ibnetdiscover", "ibsim"]


def shape(fabric: Fabric):
    """What every format keeps: counts and, per OpenSM rank, the switch data."""
    fabric.infer_ranks()
    s = fabric.summary()
    return (s["cas"], s["switches"], s["routers"], s["links"], s["levels"])


def test_format_table_and_names():
    assert WRITABLE == ["native", "ibnetdiscover", "ibsim"]
    assert [f["name"] for f in formats()] == WRITABLE + ["subnet-lst"]
    assert format_name("topo") == "ibnetdiscover" and format_name("IBCF") == "native"
    assert guess_format("a/b.lst") == "subnet-lst" and guess_format("x") is None
    with pytest.raises(UnsupportedError, match="unknown format 'dot'"):
        format_name("dot")


@pytest.mark.parametrize("preset", ["4-ary-2-full", "ft648", "PGFT(2;4,4;1,2;1,2)"])
def test_native_round_trip_is_lossless(tmp_path, preset):
    fabric = Fabric.generate(preset)
    fabric.assign_lids(lmc=1)
    path = tmp_path / "fabric.ibcf"
    fabric.write(path)
    back = Fabric.read(path)
    assert back == fabric
    assert back.ranked and back.max_lid == fabric.max_lid
    assert Fabric.from_bytes(fabric.to_bytes("native"), "native") == fabric


@pytest.mark.parametrize("preset", ["4-ary-2-full", "ft648", "8-ary-3"])
def test_ibnetdiscover_round_trip_keeps_the_topology(tmp_path, preset):
    fabric = Fabric.generate(preset)
    path = tmp_path / "fabric.topo"
    fabric.write(path)
    back = Fabric.read(path)
    assert back.topology_difference(fabric) is None
    assert Fabric.from_text(fabric.to_text("ibnetdiscover"), "ibnetdiscover").topology_difference(fabric) is None
    assert shape(back) == shape(fabric)


@pytest.mark.parametrize("preset", ["4-ary-2-full", "ft648", "PGFT(2;4,4;1,2;1,2)"])
def test_ibsim_round_trip_keeps_the_shape(tmp_path, preset):
    fabric = Fabric.generate(preset)
    path = tmp_path / "fabric.net"
    fabric.write(path)
    assert shape(Fabric.read(path)) == shape(fabric)
    assert shape(Fabric.from_text(fabric.to_text("ibsim"), "ibsim")) == shape(fabric)


def test_writing_is_deterministic():
    for fmt in WRITABLE:
        assert Fabric.generate("ft324").to_bytes(fmt) == Fabric.generate("ft324").to_bytes(fmt), fmt


def test_format_follows_the_extension_unless_named(tmp_path):
    fabric = Fabric.generate("8-ary-2")
    fabric.write(tmp_path / "a.net")
    fabric.write(tmp_path / "b.txt", "ibnetdiscover")
    assert (tmp_path / "a.net").read_bytes() == fabric.to_bytes("ibsim")
    assert (tmp_path / "b.txt").read_bytes() == fabric.to_bytes("ibnetdiscover")
    assert Fabric.read(tmp_path / "b.txt").topology_difference(fabric) is None, "sniffed from the content"


def test_ibnetdiscover_fixture(interop_dir):
    fabric = Fabric.read(interop_dir / "ibnetdiscover-example.txt", "ibnetdiscover")
    assert (fabric.num_cas, fabric.num_switches, fabric.num_links) == (4, 2, 6)
    fabric.infer_ranks()
    assert [(lvl["rank"], lvl["switches"]) for lvl in fabric.summary()["levels"]] == [(0, 2)]


def test_ibsim_fixture(interop_dir):
    fabric = Fabric.read(interop_dir / "ibsim-example.net")
    assert (fabric.num_cas, fabric.num_switches, fabric.num_links) == (4, 2, 6)
    names = {n["description"] for n in fabric.nodes()}
    assert {"Switch1", "Switch2", "Hca1", "Hca4"} <= names


def test_the_two_fixtures_describe_the_same_fabric(interop_dir):
    a = Fabric.read(interop_dir / "ibnetdiscover-example.txt")
    b = Fabric.read(interop_dir / "ibsim-example.net")
    assert shape(a) == shape(b)


def test_missing_file_is_file_not_found(tmp_path):
    missing = tmp_path / "missing.topo"
    with pytest.raises(FileNotFoundError) as info:
        Fabric.read(missing)
    assert info.value.filename == str(missing)


def test_unrecognisable_file_is_a_parse_error_naming_it(tmp_path):
    path = tmp_path / "garbage.bin"
    path.write_bytes(b"\x00\x01 not a fabric \xff\n")
    with pytest.raises(ParseError, match="garbage.bin") as info:
        Fabric.read(path)
    assert isinstance(info.value, ValueError) and isinstance(info.value, IbcloudError)


@pytest.mark.parametrize("name", ["garbage.topo", "garbage.net", "garbage.ibcf"])
def test_garbage_in_a_known_format_is_a_parse_error_naming_file_and_line(tmp_path, name):
    path = tmp_path / name
    path.write_text("this is\nnot a fabric [ at all\n")
    with pytest.raises(ParseError, match=name):
        Fabric.read(path)


def test_parse_errors_from_text_name_the_source():
    with pytest.raises(ParseError, match=r"^my\.net:1: "):
        Fabric.from_text("Bogus 8 \"x\"\n", "ibsim", name="my.net")


def test_unsupported_requests(tmp_path):
    fabric = Fabric.generate("4-ary-2-full")
    with pytest.raises(UnsupportedError, match="read, not written"):
        fabric.write(tmp_path / "x.lst")
    with pytest.raises(UnsupportedError, match="cannot tell the format"):
        fabric.write(tmp_path / "x.txt")
    with pytest.raises(UnsupportedError, match="binary"):
        fabric.to_text("native")
    with pytest.raises(UnsupportedError, match="binary"):
        Fabric.from_text("IBCLOUD", "native")
    with pytest.raises(UnsupportedError):
        fabric.to_bytes("dot")


def test_write_into_a_missing_directory_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        Fabric.generate("4-ary-2-full").write(tmp_path / "no" / "such" / "dir.topo")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["ibnetdiscover", "ibsim", "subnet-lst", "native"]), st.binary(max_size=400))
def test_readers_never_crash_on_arbitrary_bytes(fmt, data):
    try:
        Fabric.from_bytes(data, fmt, name="fuzz")
    except InternalError:  # a panic in the core
        raise
    except IbcloudError:
        pass


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(['Switch 4 "s1"', 'Hca 1 "h1"', '[1] "h1"[1]', '[2] "s1"[9]', "switchguid=0x10", "vendid=0x0"]),
            st.text(max_size=30),
        ),
        max_size=12,
    ),
    st.sampled_from(TEXT_FORMATS),
)
def test_readers_never_crash_on_plausible_text(lines, fmt):
    try:
        Fabric.from_text("\n".join(lines), fmt, name="fuzz")
    except InternalError:
        raise
    except IbcloudError:
        pass
