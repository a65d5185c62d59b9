"""Nectere (F §5.4) as a benchmark on its own: scenarios in F §5.7's
layout and the CTime / WTime / PTime split of its latency (F §5.2).

Layout (our reading of F §5.7's "2 VMs each on 2 separate physical
machines"): every Nectere instance is a client VM on host A and a server VM
on host B, so each host runs one VM of each instance; every VM has a PCPU
of its own (8 per host, F's testbed), so CPU scheduling adds nothing unless
a cap is set. Requests (``size``) cross A→B, replies (``reply``, 64 B)
B→A. The latency is the client's, post → reply taken; the server's reply
carries its stamps, so each latency splits exactly into

* **CTime**: the server's compute op, start → end (``service`` alone);
* **WTime**: request and reply with the adapters and the link (post call →
  CQE written at the peer: post cost, WQE queue, wire, switch);
* **PTime**: the rest, guest-side: the polling loops taking each CQE (poll
  cost, or a descheduled vCPU's delay) and the server's bookkeeping.

>>> from ibcloud.host import run
>>> w = run(scenario(duration="20ms")).workloads().iloc[0]
>>> round(w.latency_mean_us)     # calibration: service was fitted to F's 209 us
209
>>> float(round(w.ctime_mean_us, 1)), float(round(w.ctime_mean_us + w.wtime_mean_us + w.ptime_mean_us, 1))
(129.3, 209.0)
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ibcloud.exceptions import ParseError
from ibcloud.safeio import checked_ints

__all__ = ["BASE_SERVICE", "scenario"]

#: Server compute per request, fitted so that 64 KB Nectere alone takes F's
#: ≈ 209 µs (calibration, docs/host.md).
BASE_SERVICE = "129.3us"


@checked_ints(depth=(1, 1 << 20), instances=(1, 64), pcpus=(1, 1024))
def scenario(size: str = "64k", service: str = BASE_SERVICE, depth: int = 1, reply: str = "64",
             duration: str = "200ms", interferer: Optional[str] = None, interferer_cap: Optional[float] = None,
             instances: int = 1, interferer_iterations: Optional[int] = None,
             interferer_throttle: Optional[str] = None, interferer_start: Optional[str] = None, pcpus: int = 8,
             sample_interval: Optional[str] = None) -> Dict[str, Any]:
    """A scenario dict: ``instances`` identical Nectere instances of
    ``size`` (VMs ``c64``/``s64`` for the first, ``c64-2``/``s64-2`` … for the
    others, named after ``size``) and, with ``interferer``, one more
    instance of that size (``cint``/``sint``) whose client is capped at
    ``interferer_cap`` % and may post only ``interferer_iterations``
    requests, one per ``interferer_throttle`` at most, from
    ``interferer_start`` on.

    >>> sc = scenario(interferer="2M", interferer_cap=3.125)
    >>> [v["name"] for v in sc["vms"]], sc["vms"][2]["cap"]
    (['c64k', 's64k', 'cint', 'sint'], 3.125)
    >>> scenario(interferer_cap=50)
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.ParseError: nectere: interferer_cap needs an interferer
    """
    if interferer_cap is not None:
        if interferer is None:
            raise ParseError("nectere: interferer_cap needs an interferer")
        if not (0 < interferer_cap <= 100):
            raise ParseError(f"nectere: interferer_cap must be in (0, 100], not {interferer_cap}")
    tag = str(size).lower()
    vms: List[Dict[str, Any]] = []
    wls: List[Dict[str, Any]] = []
    for k in range(instances):
        sfx = "" if k == 0 else f"-{k + 1}"
        c, s = f"c{tag}{sfx}", f"s{tag}{sfx}"
        vms += [{"name": c, "host": "A"}, {"name": s, "host": "B"}]
        wls.append({"kind": "nectere", "vm": c, "peer": s, "size": size, "reply-size": reply,
                    "service": service, "depth": depth})
    if interferer is not None:
        cap = {} if interferer_cap is None or interferer_cap >= 100 else {"cap": interferer_cap}
        vms += [{"name": "cint", "host": "A", **cap}, {"name": "sint", "host": "B"}]
        w: Dict[str, Any] = {"kind": "nectere", "vm": "cint", "peer": "sint", "size": interferer,
                             "reply-size": reply, "service": service, "depth": depth}
        if interferer_iterations is not None:
            w["iterations"] = interferer_iterations
        if interferer_throttle is not None:
            w["throttle"] = interferer_throttle
        if interferer_start is not None:
            w["start"] = interferer_start
        wls.append(w)
    sc: Dict[str, Any] = {"duration": duration,
                          "hosts": [{"name": "A", "pcpus": pcpus}, {"name": "B", "pcpus": pcpus}],
                          "vms": vms, "workloads": wls}
    if sample_interval is not None:
        sc["sample-interval"] = sample_interval
    return sc
