"""G's DRX layouts (Ranadive ch. VI, Fig. 31 and §5.3) as host-simulator
scenarios, with an explicit time scale.

* **Symmetric**: every host runs 4 Hadoop (TeraSort) and 4 Linpack (HPL)
  VMs; Nectere has its client on host 0 and its server on host 1.
* **Asymmetric-1**: the two Nectere hosts hold ``interferers`` Hadoop and
  Linpack VMs (default 15 — with Nectere's VM that is the adapter's 16
  VFs, G's "up to 16"), the other hosts 4 + 4.
* **Asymmetric-2**: one Hadoop and one Linpack VM beside each Nectere VM;
  the other hosts 4 + 4.

G R2's staggered starts: Hadoop at 0, Linpack at 30 s, Nectere at 35 s
(G: "then Nectere"; the 5 s are our choice), in G seconds. ``scale``
multiplies every G time — the starts, the run length, DRX's epoch (60 s)
and interval (1 s), the CFS period (100 ms) and TeraSort's map and reduce
phases (6.25 s each) with its shuffle volume — so one simulated second
stands for ``1/scale`` G seconds (G §10.1 item 9 allows a stated factor).
Message latencies and HPL's 30 ms panel steps are not scaled (they are
absolute costs). Every VM has one vCPU pinned to a PCPU of its own (24 per
host: G's 2 × 6 cores with hyper-threading), the hosts use CFS (DRX's caps
are CFS quotas) and SR-IOV adapters with 16 VFs, one 4x QDR switch, 2 KB
MTU. Hadoop and Linpack traffic is fluid, Nectere's packet-level (the
hybrid of G §10.1 item 9; docs/host.md). Each Hadoop VM writes to the
same-index Hadoop VM on the next host that has one, each Linpack VM k to
the same-index Linpack VM on the (k + 1)-th following host that has one,
so every host receives in proportion to its own VMs and Linpack VMs
elsewhere send into the Linpack VMs beside Nectere (the receiver-side path
G §2.3 says Local policies miss).

>>> sc = scenario("symmetric", hosts=8)
>>> len(sc["vms"]), sc["duration"]
(66, '12s')
>>> sorted({w["start"] for w in sc["workloads"]})
['0s', '3.5s', '3s']
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ibcloud.exceptions import ParseError
from ibcloud.host.nectere import BASE_SERVICE
from ibcloud.safeio import checked_ints

__all__ = ["LAYOUTS", "G_TIMES", "counts", "scenario", "ensembles", "sensitivity"]

#: Layout names of G Fig. 31.
LAYOUTS = ("symmetric", "asym1", "asym2")
#: G times in seconds: Linpack and Nectere starts, the run's end (two 60 s epochs), epoch, interval, CFS period,
#: TeraSort's map (= reduce) phase.
G_TIMES = {"linpack": 30.0, "nectere": 35.0, "end": 120.0, "epoch": 60.0, "interval": 1.0, "cfs": 0.1,
           "map": 6.25}
#: TeraSort's 1 MB writes per job at scale 1 (10 GB over 32 VMs).
TERASORT_MESSAGES = 312
#: HPL's compute per panel step: a **calibration** (claims/drx.toml R1-cal): with the skeleton's 30 ms (Ns 7500) the
#: uncontrolled Symmetric run degrades Nectere by 2 %; 1 ms (G's smaller Ns, §9 A12) gives ≈ 30 %.
HPL_STEP = "1ms"
VFS = 16
PCPUS = 24
#: CQ entries per VM: IBMon's scan (once per DRX interval) sees at most one ring of new CQEs; Nectere completes
#: ≈ 12,500 CQEs per G second per VM, so G's 1 s interval needs more than the default 1,024.
CQ_ENTRIES = 1 << 16


def _s(x: float) -> str:
    return f"{round(x, 9):g}s"


@checked_ints(hosts=(2, 36), interferers=(2, VFS - 1))
def counts(layout: str, hosts: int = 8, interferers: int = VFS - 1) -> List[Dict[str, int]]:
    """Hadoop and Linpack VMs per host of ``layout``.

    >>> counts("asym1", hosts=3)
    [{'hadoop': 8, 'linpack': 7}, {'hadoop': 8, 'linpack': 7}, {'hadoop': 4, 'linpack': 4}]
    >>> counts("asym2", hosts=2)
    [{'hadoop': 1, 'linpack': 1}, {'hadoop': 1, 'linpack': 1}]
    >>> counts("ring")
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.ParseError: drx layout: unknown layout 'ring' (one of symmetric, asym1, asym2)
    """
    if layout not in LAYOUTS:
        raise ParseError(f"drx layout: unknown layout '{layout}' (one of {', '.join(LAYOUTS)})")
    out = []
    for h in range(hosts):
        if h < 2 and layout == "asym1":
            out.append({"hadoop": (interferers + 1) // 2, "linpack": interferers // 2})
        elif h < 2 and layout == "asym2":
            out.append({"hadoop": 1, "linpack": 1})
        else:
            out.append({"hadoop": 4, "linpack": 4})
    return out


def _peer(per: List[Dict[str, int]], kind: str, h: int, k: int, skip: int) -> Tuple[int, int]:
    """The peer of VM ``k`` of ``kind`` on host ``h``: the same-index VM on
    the ``skip``-th following host that has one (so a host receives in
    proportion to its own VMs of that kind, as in an MPI or shuffle pattern);
    with no such host, index ``k`` modulo the next host's count."""
    n = len(per)
    cands = [(h + x) % n for x in range(1, n) if per[(h + x) % n][kind] > k]
    if cands:
        return cands[skip % len(cands)], k
    nxt = (h + 1) % n
    return nxt, k % per[nxt][kind]


def _check_scale(scale: float) -> None:
    if not (isinstance(scale, (int, float)) and 0.001 <= scale <= 1.0):
        raise ParseError(f"drx layout: scale must lie in [0.001, 1], got {scale!r}")


@checked_ints(hosts=(2, 36), interferers=(2, VFS - 1))
def scenario(layout: str = "symmetric", hosts: int = 8, scale: float = 0.1, interferers: int = VFS - 1,
             nectere: bool = True, others: bool = True, end: Optional[float] = None,
             hpl_step: Optional[str] = HPL_STEP) -> Dict[str, Any]:
    """A host-simulator scenario of ``layout`` (no controller; add one to
    ``controllers``). ``nectere``/``others`` drop Nectere or the
    interferers (for the baselines); ``end`` overrides the run's end in G
    seconds; ``hpl_step`` is HPL's compute per panel step (None: the
    skeleton's default, 30 ms).

    >>> sc = scenario("asym2", hosts=2, scale=0.05)
    >>> [v["name"] for v in sc["vms"]][:3], sc["duration"]
    (['h0-hadoop0', 'h0-linpack0', 'h1-hadoop0'], '6s')
    >>> scenario(scale=2)
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.ParseError: drx layout: scale must lie in [0.001, 1], got 2
    """
    _check_scale(scale)
    per = counts(layout, hosts, interferers)
    hs = [{"name": f"h{h}", "pcpus": PCPUS, "scheduler": {"kind": "cfs"}, "adapter": {"kind": "sriov", "vfs": VFS}}
          for h in range(hosts)]
    vms: List[Dict[str, Any]] = []
    wls: List[Dict[str, Any]] = []
    pin = [0] * hosts

    def vm(name: str, h: int) -> None:
        vms.append({"name": name, "host": f"h{h}", "pin": [pin[h]], "cq-entries": CQ_ENTRIES})
        pin[h] += 1

    if others:
        for h in range(hosts):
            for k in range(per[h]["hadoop"]):
                vm(f"h{h}-hadoop{k}", h)
            for k in range(per[h]["linpack"]):
                vm(f"h{h}-linpack{k}", h)
    if nectere:
        vm("nectere-client", 0)
        vm("nectere-server", 1)
    if others:
        msgs = max(1, round(TERASORT_MESSAGES * scale))
        phase = _s(G_TIMES["map"] * scale)
        for h in range(hosts):
            for k in range(per[h]["hadoop"]):
                nxt, j = _peer(per, "hadoop", h, k, 0)
                wls.append({"kind": "terasort", "vm": f"h{h}-hadoop{k}", "peer": f"h{nxt}-hadoop{j}", "mode": "fluid",
                            "sl": 1, "messages": msgs, "compute-before": phase, "compute-after": phase,
                            "start": "0s"})
            for k in range(per[h]["linpack"]):
                nxt, j = _peer(per, "linpack", h, k, k)
                wls.append({"kind": "hpl", "vm": f"h{h}-linpack{k}", "peer": f"h{nxt}-linpack{j}", "mode": "fluid",
                            "sl": 1, "start": _s(G_TIMES["linpack"] * scale)} |
                           ({} if hpl_step is None else {"compute-before": hpl_step}))
    if nectere:
        # 64 KB requests (G Table 7); the server's compute is F's calibrated one (docs/host.md), G gives none.
        wls.append({"kind": "nectere", "vm": "nectere-client", "peer": "nectere-server", "size": "64k",
                    "service": BASE_SERVICE, "sl": 0, "start": _s(G_TIMES["nectere"] * scale if others else 0.0)})
    return {"duration": _s((G_TIMES["end"] if end is None else end) * scale), "sample-interval": _s(scale),
            "fabric": {"link": "4xQDR", "mtu": 2048}, "hosts": hs, "vms": vms, "workloads": wls}


def ensembles(sc: Dict[str, Any], io_min_share: float = 0.25) -> Dict[str, Dict[str, Any]]:
    """DRX's VMEs for a scenario of :func:`scenario` or :func:`sensitivity`:
    every VM named ``*-NAME<k>`` belongs to ensemble NAME, Nectere's two VMs to
    ``nectere`` (high priority). ``g`` is a nominal 1,000 CQE/s per VM and
    IOmin ``io_min_share`` of it (G gives neither; with I/O proportional to
    CPU, the repaired caps stop at 100 × IOmin / g = 25).

    >>> e = ensembles(scenario("symmetric", hosts=2))
    >>> sorted(e), len(e["hadoop"]["vms"]), e["nectere"]["priority"]
    (['hadoop', 'linpack', 'nectere'], 8, 'high')
    """
    out: Dict[str, Dict[str, Any]] = {}
    for v in sc["vms"]:
        name = v["name"]
        if name.startswith("nectere-"):
            key = "nectere"
        else:
            key = name.split("-", 1)[1].rstrip("0123456789")
        out.setdefault(key, {"vms": []})["vms"].append(name)
    for key, e in out.items():
        n = len(e["vms"])
        e["g"] = 1000.0 * n
        if key == "nectere":
            e["priority"] = "high"
        else:
            e["io-min"] = io_min_share * e["g"]
    return out


def sensitivity(setup: str, scale: float = 0.1) -> Dict[str, Any]:
    """G Fig. 36's setups on the two Nectere hosts: ``a`` = Nectere + two
    Linpack instances (ensembles ``linpacka`` and ``linpackb``, 2 VMs per
    host each); ``b`` = Nectere + Hadoop MRBench + a smaller Linpack (HPL
    with 64 KB panels instead of 256 KB: G's smaller Ns). Starts and length
    as the layouts (the second interferer in Linpack's slot).

    >>> sorted({w["kind"] for w in sensitivity("b")["workloads"]})
    ['hpl', 'mrbench', 'nectere']
    >>> sensitivity("c")
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.ParseError: drx sensitivity: setup must be 'a' or 'b', got 'c'
    """
    if setup not in ("a", "b"):
        raise ParseError(f"drx sensitivity: setup must be 'a' or 'b', got {setup!r}")
    _check_scale(scale)
    hs = [{"name": f"h{h}", "pcpus": PCPUS, "scheduler": {"kind": "cfs"}, "adapter": {"kind": "sriov", "vfs": VFS}}
          for h in range(2)]
    first = ("linpacka", {"kind": "hpl"}) if setup == "a" else ("mrbench", {"kind": "mrbench"})
    first = ("linpacka", {"kind": "hpl", "compute-before": HPL_STEP}) if setup == "a" else first
    second = ("linpackb", {"kind": "hpl", "compute-before": HPL_STEP}) if setup == "a" else \
        ("linpack", {"kind": "hpl", "size": "64k", "compute-before": HPL_STEP})
    vms: List[Dict[str, Any]] = []
    wls: List[Dict[str, Any]] = []
    for i, (name, w) in enumerate((first, second)):
        start = 0.0 if i == 0 else G_TIMES["linpack"] * scale
        for h in range(2):
            for k in range(2):
                vms.append({"name": f"h{h}-{name}{k}", "host": f"h{h}", "pin": [2 * i + k], "cq-entries": CQ_ENTRIES})
        for h in range(2):
            for k in range(2):
                wls.append(dict(w, vm=f"h{h}-{name}{k}", peer=f"h{1 - h}-{name}{k}", mode="fluid", sl=1,
                                start=_s(start)))
    vms += [{"name": f"nectere-{r}", "host": f"h{h}", "pin": [4], "cq-entries": CQ_ENTRIES}
            for h, r in ((0, "client"), (1, "server"))]
    wls.append({"kind": "nectere", "vm": "nectere-client", "peer": "nectere-server", "size": "64k",
                "service": BASE_SERVICE, "sl": 0, "start": _s(G_TIMES["nectere"] * scale)})
    return {"duration": _s(G_TIMES["end"] * scale), "sample-interval": _s(scale),
            "fabric": {"link": "4xQDR", "mtu": 2048}, "hosts": hs, "vms": vms, "workloads": wls}
