"""``saquery`` against two SAs on the same fabric, record by record.

:func:`compare_with_opensm` brings a fabric up twice on fresh ibsim
instances — first with OpenSM, then with ibcloud's SM seeded with OpenSM's
``guid2lid`` so that both use the same LIDs — runs the same ``saquery``
commands (infiniband-diags, through the umad2sim shim) against each SA and
compares the parsed records field by field.

Some fields differ by construction and are reported, not counted as
disagreements (:data:`KNOWN_DIFFERENCES` says why); everything else must
agree.

Through ibsim's shim a requester sees one MAD per answer: saquery, which
relies on the kernel's RMPP, shows the records of the first 200-byte
segment of a table from either SA, and counts record slots from the MAD
length the shim reports, so slots past the end of a short table hold
whatever the shim's buffer held (from either SA). Whole-table queries are
therefore compared on their first record; queries that select one record
(``NR <lid>``, ``PIR <lid>/<port>``, …) cover every table record by
record, and :func:`ibcloud.sm.saquery.full_table` reads a whole table
through ibcloud's own RMPP requester.

>>> recs = parse_records("NodeRecord dump:\\n\\t\\tlid.....1\\n\\t\\tnode_type.....Switch\\n")
>>> recs[0]["lid"], recs[0]["node_type"]
('1', 'Switch')
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ibcloud.safeio import checked_ints

__all__ = ["KNOWN_DIFFERENCES", "Comparison", "compare_with_opensm", "default_queries", "full_table", "parse_records"]

#: (record kind, field) pairs that differ between OpenSM's SA and ours, and why.
KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {
    ("SwitchInfoRecord", "LifeTimeValue/PortStateChange/OpSL2VL"):
        "OpenSM writes SwitchInfo.LifeTimeValue (0x12); ibcloud's SM leaves it as the switch reports it",
    ("SMInfoRecord", "ActCount"): "each SM counts its own SMPs",
    ("PortInfoRecord", "LocalPort"):
        "a switch reports as LocalPort the port the SM's SMP arrived on, so it follows each SM's discovery path "
        "(OpenSM's depends on the order its answers arrive in; seen under load in CI)",
    ("SA ClassPortInfo", "Capability mask"):
        "OpenSM claims notices, UD multicast and multipath (0x2602); ibcloud's SA claims optional records and "
        "CapabilityMask matching (0x2100)",
    ("SA ClassPortInfo", "Capability mask 2"): "OpenSM claims QoS/extended capabilities ibcloud's SA does not serve",
    ("MCMember Record", "*"): "OpenSM creates the IPoIB broadcast group; ibcloud's SM has no multicast",
    ("SwitchInfoRecord", "MulticastFDBTop"):
        "saquery prints it only when the SA's ClassPortInfo claims IsMulticastFDBTopSupported (CapabilityMask2); "
        "ibcloud's SM does no multicast",
    ("LFT Record", "_extra"):
        "each SM's own routing (engines and tie-breaks differ); tests/interop/test_sm.py checks ibcloud's tables "
        "against ibroute",
}

#: Also known: an unconnected switch port's PortInfoRecord, which OpenSM
#: answers with the empty PortInfo it keeps for it and ibcloud's SM with the
#: port's own (Down) PortInfo (counted as "PortInfoRecord(unconnected
#: switch port)").

#: PortInfo fields OpenSM programs and ibcloud's SM does not (it leaves the
#: values the port reports): P_Key enforcement, VL arbitration/operational
#: VLs, M_Key lease, subnet timeout, HOQ life, GID prefix, client reregister.
PORTINFO_NOT_PROGRAMMED = (
    "GidPrefix", "MkeyLeasePeriod", "SubnetTimeout", "RespTimeVal", "OperVLs", "VLHighLimit", "HoqLife",
    "VLStallCount", "PartEnforceInb", "PartEnforceOutb", "FilterRawInb", "FilterRawOutb", "ClientReregister",
    "NeighborMTU", "LinkWidthEnabled", "LinkSpeedEnabled", "LinkDownDefState", "McastPkeyTrapSuppressionEnabled",
    "SMSL", "MtuCap",
)
for _f in PORTINFO_NOT_PROGRAMMED:
    KNOWN_DIFFERENCES[("PortInfoRecord", _f)] = "a PortInfo field OpenSM programs and ibcloud's SM does not"

#: Unkeyed queries: compared on their first record (see the module's note).
WHOLE_TABLES = {"NR", "PIR", "SWIR", "LR", "SMIR", "GIR", "LFTR", "SR", "IIR", "MCMR"}

_HEADER = re.compile(r"^\s*([A-Za-z][A-Za-z ]*?(?:Record|ClassPortInfo))(?: dump)?:\s*$")
_FIELD = re.compile(r"^\s*([^.:\s][^.:]*?)(?::)?\.{2,}:?(.*)$")


def parse_records(text: str) -> list[dict[str, str]]:
    """Splits saquery's output into records (``{"_kind": ..., field: value}``).

    >>> r = parse_records("SA ClassPortInfo:\\n\\t\\tBase version.............1\\n")
    >>> r[0]["_kind"], r[0]["Base version"]
    ('SA ClassPortInfo', '1')
    """
    out: list[dict[str, str]] = []
    for line in text.splitlines():
        m = _HEADER.match(line)
        if m and "SwitchInfo dump" not in line and "SMInfo dump" not in line and "PortInfo dump" not in line:
            out.append({"_kind": m.group(1).strip()})
            continue
        f = _FIELD.match(line)
        if f and out:
            key = f.group(1).strip().rstrip(":")
            out[-1].setdefault(key, f.group(2).strip())
        elif out and line.strip() and not line.strip().endswith("dump:") and line.strip() != "RID":
            # continuation lines (capability names) belong to the field above
            out[-1].setdefault("_extra", "")
            out[-1]["_extra"] += line.strip() + " "
    return out


@checked_ints(pairs=(0, 0xFFFF))
def default_queries(fabric: Any, *, pairs: int = 16) -> list[list[str]]:
    """saquery argument lists covering every record kind ibcloud's SA serves
    on ``fabric`` (an :class:`ibcloud.Fabric` with LIDs): whole tables
    (first segment), and every node, switch, end port, link and GUID block
    by key, the ports of every switch, LFT block 0 of every switch and
    ``pairs`` PathRecords.

    >>> from ibcloud import Fabric
    >>> qs = default_queries(Fabric.generate("XGFT(2;4,2;1,2)"), pairs=2)
    >>> ["NR", "1"] in qs and ["-c"] in qs
    True
    """
    nodes = fabric.nodes()
    cas = [n for n in nodes if n["kind"] == "ca"]
    sws = [n for n in nodes if n["kind"] == "switch"]
    qs: list[list[str]] = [[], ["-c"], ["NR"], ["PIR"], ["SWIR"], ["LR"], ["SMIR"], ["GIR"], ["LFTR"], ["SR"],
                           ["IIR"], ["MCMR"], ["-s"], ["-D"]]
    for n in nodes:
        qs.append(["NR", str(n["lid"])])
        qs.append(["-O", str(n["lid"])])
        qs.append(["GIR", f"{n['lid']}/0"])
        qs.append(["LR", f"{n['lid']}/1"])
    for n in cas:
        qs.append(["PIR", f"{n['lid']}/1"])
        qs.append(["-U", hex(n["guid"])])
    for n in sws:
        qs.append(["SWIR", str(n["lid"])])
        qs.append(["LFTR", f"{n['lid']}/0"])
        for p in range(0, n["num_ports"] + 1):
            qs.append(["PIR", f"{n['lid']}/{p}"])
    lids = [n["lid"] for n in cas]
    for i in range(min(pairs, len(lids) * len(lids))):
        a, b = lids[i % len(lids)], lids[(i * 7 + 3) % len(lids)]
        qs.append(["-p", "--slid", str(a), "--dlid", str(b)])
    return qs


@dataclass
class Comparison:
    """The outcome of one comparison.

    >>> Comparison().agree
    True
    """

    queries: int = 0
    records: int = 0
    fields: int = 0
    known: dict[str, int] = field(default_factory=dict)
    disagreements: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        """No disagreement outside :data:`KNOWN_DIFFERENCES` and no failed query.

        >>> Comparison(disagreements=["x"]).agree
        False
        """
        return not self.disagreements and not self.failures

    def summary(self) -> dict[str, Any]:
        """A JSON-able digest.

        >>> Comparison(queries=2).summary()["queries"]
        2
        """
        return {"queries": self.queries, "records": self.records, "fields": self.fields, "known": self.known,
                "disagreements": self.disagreements[:50], "failures": self.failures[:50], "agree": self.agree}


def _known(kind: str, key: str) -> str | None:
    return KNOWN_DIFFERENCES.get((kind, key)) or KNOWN_DIFFERENCES.get((kind, "*"))


def _run_all(sim: Any, queries: list[list[str]]) -> list[tuple[int, str]]:
    out = []
    for q in queries:
        done = sim.run_client(["saquery", *q], check=False, timeout=60)
        out.append((done.returncode, done.stdout))
    return out


def compare_with_opensm(net_file: str | Path, *, queries: list[list[str]] | None = None,
                        engine: str = "minhop") -> tuple[Comparison, list[list[str]]]:
    """Runs ``queries`` (default :func:`default_queries` on OpenSM's fabric)
    against OpenSM's SA and against ibcloud's on fresh ibsim instances of
    ``net_file`` and compares them. Returns the comparison and the queries.

    >>> compare_with_opensm.__name__
    'compare_with_opensm'
    """
    from ibcloud import Fabric
    from ibcloud.interop import IbSim, _scratch_root
    from ibcloud.sa.run import OpenSmDaemon
    from ibcloud.sm import SmDaemon

    keep = Path(tempfile.mkdtemp(prefix="saq-", dir=_scratch_root()))
    try:
        with IbSim(net_file) as sim, OpenSmDaemon(sim) as osm:
            fabric = Fabric.read(osm.subnet_lst)
            qs = queries if queries is not None else default_queries(fabric)
            theirs = _run_all(sim, qs)
            shutil.copyfile(osm.cache_dir / "guid2lid", keep / "guid2lid")
        with IbSim(net_file) as sim, SmDaemon(sim, engine=engine, args=["--guid2lid", str(keep / "guid2lid")]):
            ours = _run_all(sim, qs)
    finally:
        shutil.rmtree(keep, ignore_errors=True)
    cmp = Comparison(queries=len(qs))
    for q, (rc_t, out_t), (rc_o, out_o) in zip(qs, theirs, ours):
        label = "saquery " + " ".join(q)
        if rc_t != rc_o:
            cmp.failures.append(f"{label}: exit {rc_o} (OpenSM's saquery: {rc_t})")
            continue
        rt, ro = parse_records(out_t), parse_records(out_o)
        if len(q) == 1 and q[0] in WHOLE_TABLES:
            rt, ro = rt[:1], ro[:1]
        kinds_t = {r["_kind"] for r in rt}
        if len(rt) != len(ro) and not all(_known(k, "*") for k in kinds_t):
            cmp.disagreements.append(f"{label}: {len(ro)} records (OpenSM {len(rt)})")
            continue
        for a, b in zip(rt, ro):
            cmp.records += 1
            kind = a["_kind"]
            if kind == "PortInfoRecord" and a.get("LocalPort") == "0" and a.get("PortNum") not in (None, "0") \
                    and a.get("LinkWidthActive", "").startswith("undefined"):
                # An unconnected switch port: OpenSM answers the empty
                # PortInfo it keeps for it, ibcloud's SM the port's own
                # (Down) PortInfo, read in discovery.
                cmp.known["PortInfoRecord(unconnected switch port)"] = \
                    cmp.known.get("PortInfoRecord(unconnected switch port)", 0) + 1
                continue
            for key in sorted(set(a) | set(b)):
                if key.startswith("_") and key != "_extra":
                    continue
                cmp.fields += 1
                va, vb = a.get(key), b.get(key)
                if va == vb:
                    continue
                why = _known(kind, key)
                if why:
                    cmp.known[f"{kind}.{key}"] = cmp.known.get(f"{kind}.{key}", 0) + 1
                else:
                    cmp.disagreements.append(f"{label}: {kind}.{key} = {vb!r} (OpenSM {va!r})")
    return cmp, qs


@checked_ints(attr_id=(0, 0xFFFF), comp_mask=(0, 2**64 - 1), window=(1, 1024), timeout_ms=(1, 2**31 - 1))
def full_table(attr_id: int, *, comp_mask: int = 0, template: bytes = b"", window: int = 16,
               timeout_ms: int = 2000) -> tuple[int, int, list[bytes]]:
    """SubnAdmGetTable with RMPP done by ibcloud (``ibcloud_sm::sa::client``),
    so the whole table crosses ibsim's shim: (status, attribute offset in
    8-byte words, records). Run it in a shimmed process.

    >>> full_table.__name__
    'full_table'
    """
    from ibcloud import _native

    status, offset, records = _native.sm_sa_get_table(attr_id, comp_mask=comp_mask, template=template,
                                                      window=window, timeout_ms=timeout_ms)
    return status, offset, [bytes(r) for r in records]


def _full_table_main(argv: list[str]) -> int:
    """``python -m ibcloud.sm.saquery ATTR_ID OUT.json``: a whole table as hex records.

    >>> _full_table_main.__name__
    '_full_table_main'
    """
    import json

    status, offset, records = full_table(int(argv[0], 0))
    Path(argv[1]).write_text(json.dumps({"status": status, "attr_offset": offset,
                                         "records": [r.hex() for r in records]}))
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(_full_table_main(sys.argv[1:]))
