"""G's experiment layouts as scenario documents for ``ibcloud host run``
(``ibcloud host layout NAME``): the same dictionaries that ``reproduce
drx`` and ``reproduce sphinx`` run, written as TOML so that a user can
read, edit and run one case by hand.

* DRX (G Fig. 31, Fig. 36; ``ibcloud.host.drx_layouts``):
  ``drx-symmetric``, ``drx-asym1``, ``drx-asym2``, ``drx-fig36a``,
  ``drx-fig36b``; ``policy`` adds a DRX controller (``eb-dist``,
  ``hb-dist``, ``eb-local``, ``hb-local``, ``cc-dist``, ``pc-dist``) or
  sets a static hardware policy (``stmax``, ``stmaxq``: G Table 6 as the
  fabric's ``qos``, bulk flows packet-level).
* Sphinx (G §6.3; ``ibcloud.host.sphinx_reproduction``): ``sphinx-table8``
  (48 / 187 µs) and ``sphinx-table9-1:1``, ``-1:4``, ``-4:1``, ``-1:10``
  (each row's pair, calibrated as the reproduction does), each application
  on its own SL at weights 32:32; ``policy`` = an LP target (``1:4``) adds
  Sphinx with that target.
* G §6.1's motivation runs: ``fig40`` (two Memcached clients, 16 KB and
  512 KB, served from one host), ``fig41`` (Nectere beside Memcached
  alternating 4 KB / 512 KB Gets), ``fig44`` (a 64 KB and a 2 MB Nectere;
  ``policy`` = the 2 MB one's VL weight, default Equal).

>>> sorted(LAYOUTS)[:3]
['drx-asym1', 'drx-asym2', 'drx-fig36a']
>>> sc = layout("fig44", policy="8")
>>> sc["fabric"]["vl-arbitration"]["low"][1]
{'vl': 1, 'weight': 8}
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from ibcloud.exceptions import ParseError
from ibcloud.safeio import checked_ints

__all__ = ["LAYOUTS", "layout", "to_toml"]

DRX_POLICIES = ("eb-dist", "hb-dist", "eb-local", "hb-local", "cc-dist", "pc-dist")
DRX_HARDWARE = ("stmax", "stmaxq")


def _drx(name: str, hosts: int, scale: float, policy: Optional[str], sla: Optional[float]) -> Dict[str, Any]:
    from ibcloud.host import drx_layouts as L
    from ibcloud.host import drx_reproduction as R

    sc = L.sensitivity(name[-1], scale) if name.startswith("fig36") else L.scenario(name, hosts, scale)
    if policy is None:
        return sc
    if policy in DRX_HARDWARE:
        for w in sc["workloads"]:
            w["mode"] = "packet"
        sc["fabric"]["qos"] = policy
        return sc
    if policy not in DRX_POLICIES:
        raise ParseError(f"layout drx-{name}: policy must be one of {', '.join(DRX_POLICIES + DRX_HARDWARE)}, "
                         f"got {policy!r}")
    if sla is None:
        # The reproduction's SLA level: Nectere's per-VM CQE rate alone (a run of this size).
        sla = min(R._alone(hosts, scale, None)["cqe_per_s"].values())
    if not (sla > 0 and sla < float("inf")):
        raise ParseError(f"layout drx-{name}: the SLA level must be a positive number of CQEs/s, got {sla}")
    sc["controllers"] = [R.controller(policy, sc, scale, float(sla))]
    return sc


def _sphinx(row: str, policy: Optional[str]) -> Dict[str, Any]:
    from ibcloud.host import sphinx_reproduction as S

    if row == "table8":
        kw: Dict[str, Any] = {}
        base = S.TABLE8_BASE
    else:
        fit = S._fit_services(None)
        base = S.TABLE9[row][0]
        kw = dict(n_service_us=fit["nectere"][base[0]], m_service_us=fit["memcached"][base[1]],
                  m_sizes=(S.T9_M_SIZE[base[1]],))
    ctl = None
    if policy is not None:
        from ibcloud.host.sphinx import policy_ratio

        try:
            policy_ratio(policy)  # a bad ratio is named here, not by the simulator
        except ValueError as err:
            raise ParseError(f"layout sphinx-{row}: {err}") from None
        ctl = [S._sphinx(policy, base)]
    return S.scenario(S.DURATIONS["default"][1], controllers=ctl, **kw)


def _fig40() -> Dict[str, Any]:
    from ibcloud.host import sphinx_reproduction as S

    sc = S.scenario(30, nectere=False, weights=None)
    mc = sc["workloads"][0]
    sc["vms"] = [{"name": "ms16k", "host": "A"}, {"name": "mc16k", "host": "B"},
                 {"name": "ms512k", "host": "A"}, {"name": "mc512k", "host": "B"}]
    sc["workloads"] = [dict(mc, vm="mc16k", peer="ms16k", sizes=["16k"]),
                       dict(mc, vm="mc512k", peer="ms512k", sizes=["512k"])]
    return sc


def _fig41() -> Dict[str, Any]:
    from ibcloud.host import sphinx_reproduction as S

    sc = S.scenario(600, weights=None, m_sizes=("4k", "512k"), m_per_size=1000)
    for w in sc["workloads"]:
        if w["kind"] == "memcached":
            w["iterations"] = 4000
    return sc


def _fig44(policy: Optional[str]) -> Dict[str, Any]:
    from ibcloud.host.sphinx_motivation import HIGH, _two_nectere

    if policy is None or policy == "equal":
        return _two_nectere(60, None)
    try:
        x = int(policy)
    except ValueError:
        x = 0
    if not 1 <= x <= 255:
        raise ParseError(f"layout fig44: policy is the 2 MB instance's VL weight 1-255 or 'equal', got {policy!r}")
    return _two_nectere(60, (HIGH, x))


#: Every layout: name → (description, builder(hosts, scale, policy, sla)).
LAYOUTS: Dict[str, "tuple[str, Callable[..., Dict[str, Any]]]"] = {
    **{f"drx-{n}": (d, (lambda n: lambda h, s, p, a: _drx(n, h, s, p, a))(n)) for n, d in (
        ("symmetric", "G Fig. 31 Symmetric: Nectere, TeraSort and HPL on every host"),
        ("asym1", "G Fig. 31 Asymmetric-1: 15 interfering VMs beside Nectere"),
        ("asym2", "G Fig. 31 Asymmetric-2: interferers away from Nectere's hosts"),
        ("fig36a", "G Fig. 36(a): Nectere + two Linpack instances"),
        ("fig36b", "G Fig. 36(b): Nectere + MRBench + a small Linpack"))},
    "sphinx-table8": ("G Table 8: Nectere 48 us beside Memcached 187 us (512 KB), own SLs",
                      lambda h, s, p, a: _sphinx("table8", p)),
    **{f"sphinx-table9-{t}": (f"G Table 9, LP {t} row's pair", (lambda t: lambda h, s, p, a: _sphinx(t, p))(t))
       for t in ("1:1", "1:4", "4:1", "1:10")},
    "fig40": ("G Fig. 40: two Memcached clients (16 KB, 512 KB) served from one host", lambda h, s, p, a: _fig40()),
    "fig41": ("G Fig. 41: Nectere beside Memcached alternating 4 KB / 512 KB Gets", lambda h, s, p, a: _fig41()),
    "fig44": ("G Fig. 44: 64 KB and 2 MB Nectere, the 2 MB one's VL weight = policy", lambda h, s, p, a: _fig44(p)),
}


@checked_ints(hosts=(1, 64))
def layout(name: str, hosts: int = 8, scale: float = 0.1, policy: Optional[str] = None,
           sla: Optional[float] = None) -> Dict[str, Any]:
    """The scenario document of layout ``name`` (see the module's list);
    ``hosts`` and ``scale`` apply to the DRX layouts (G's 8 hosts, time
    scale 0.1 as in ``reproduce drx``), ``policy`` as described above,
    ``sla`` = Nectere's per-VM CQE/s level for a DRX policy (default: run
    Nectere alone first, as the reproduction does).

    >>> layout("drx-asym2", hosts=2, scale=0.05)["duration"]
    '6s'
    >>> layout("sphinx-table8", policy="1:4")["controllers"][0]["groups"][0]["target"]
    '1:4'
    >>> layout("ring")
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.ParseError: layout: unknown layout 'ring' (ibcloud host layout --list)
    """
    if name not in LAYOUTS:
        raise ParseError(f"layout: unknown layout {name!r} (ibcloud host layout --list)")
    if not (0 < scale <= 1):  # also refuses NaN
        raise ParseError(f"layout {name}: scale must be in (0, 1], got {scale!r}")
    return LAYOUTS[name][1](hosts, scale, policy, sla)


def to_toml(scenario: Dict[str, Any], header: str = "") -> str:
    """The scenario as a TOML document (``ibcloud host run`` reads it back
    to the same dictionary), after ``header`` as comment lines.

    >>> import tomllib
    >>> sc = layout("fig41")
    >>> tomllib.loads(to_toml(sc, "G Fig. 41")) == sc
    True
    """
    import json

    from ibcloud import _native

    head = "".join(f"# {line}\n" for line in header.splitlines())
    return head + _native.host_to_toml(json.dumps(scenario))
