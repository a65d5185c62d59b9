"""Fabric QoS and congestion-control policies as OpenSM configuration.

A policy is a preset of Ranadive's DRX evaluation (G Table 6 with the IBCC
values of Table 5: ``stmax``, ``stmaxq``, ``drxmax``, ``drxmaxq``) or a TOML
file (docs/qos.md). The Rust core (``ibcloud-qos``) checks it against the
limits of the IB specification and of OpenSM 3.3.23 and writes the QoS
options (``qos_*``, ``qos_ca_*``, ``qos_sw0_*``, ``qos_swe_*``,
``qos_rtr_*``) and the congestion-control options (``congestion_control``,
``cc_*``) of opensm.conf. A bad file raises :class:`~ibcloud.ParseError`
naming the file, line and problem.

The ``smpquery`` readers turn the tables a real SM programmed back into
Python values, so they can be compared with :func:`policy_tables`.

>>> conf = opensm_conf("stmaxq", "qos")
>>> [line for line in conf.splitlines() if line.startswith("qos_vlarb_low")]
['qos_vlarb_low 0:254,1:1']
>>> policy_tables("stmax")["qos"]["ca"]["sl2vl"][:4]
[0, 1, 1, 1]
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Union

from ibcloud.safeio import checked_ints

__all__ = ["expected_vlarb", "opensm_conf", "parse_sl2vl", "parse_vlarb", "policy_tables", "presets"]

PathLike = Union[str, "os.PathLike[str]"]


def presets() -> list[str]:
    """The preset policies (G Table 6).

    >>> presets()
    ['stmax', 'stmaxq', 'drxmax', 'drxmaxq']
    """
    from ibcloud import _native

    return list(_native.qos_presets())


def opensm_conf(policy: PathLike, part: str = "all", *, cc_sls: str = "all") -> str:
    """The opensm.conf options of ``policy`` (a preset name or a TOML file).

    ``part`` is ``"qos"``, ``"cc"`` or ``"all"``; ``cc_sls`` chooses, for a
    preset, the SLs that get congestion control (G §9 A11): ``"all"`` or
    ``"bulk"`` (every SL but SL0).

    >>> print(opensm_conf("stmax", "cc").splitlines()[1])
    congestion_control TRUE
    >>> "cc_ca_cong_setting_ccti_timer 0 " in opensm_conf("stmax", "cc", cc_sls="bulk")
    False
    """
    from ibcloud import _native

    return str(_native.qos_opensm_conf(os.fspath(policy), part, cc_sls))


def policy_tables(policy: PathLike, *, cc_sls: str = "all") -> dict[str, Any]:
    """What ``policy`` programs: per port class (``ca``, ``sw0``, ``swe``,
    ``rtr``) the QoS tables, the congestion-control settings, and what the
    simulator applies (``None`` when the simulator cannot apply it as one
    setting for every port and SL).

    >>> t = policy_tables("stmaxq")
    >>> t["qos"]["swe"]["vlarb_low"], t["cc"]["ccti_limit"], t["simulator"]["vls"]
    ([[0, 254], [1, 1]], 127, 2)
    """
    from ibcloud import _native

    return dict(json.loads(_native.qos_policy_json(os.fspath(policy), cc_sls)))


_SL2VL_ROW = re.compile(r"^ports: in\s+(\d+), out\s+(\d+):\s*\|(.*)\|\s*$")


def parse_sl2vl(text: str) -> dict[tuple[int, int], list[int]]:
    """``smpquery sl2vl`` output as ``{(in_port, out_port): [VL of SL0..15]}``.

    >>> out = "# SL2VL table: Lid 1\\n#  SL: | 0| 1|\\nports: in  0, out  0: | 0| 1| 0| 1| 0| 1| 0| 1| 0| 1| 0| 1| 0| 1| 0| 1|\\n"
    >>> parse_sl2vl(out)[(0, 0)][:3]
    [0, 1, 0]
    """
    rows: dict[tuple[int, int], list[int]] = {}
    for line in text.splitlines():
        m = _SL2VL_ROW.match(line.strip())
        if m:
            vls = [int(v) for v in m.group(3).split("|")]
            if len(vls) != 16:
                raise ValueError(f"smpquery sl2vl row has {len(vls)} SLs, not 16: {line!r}")
            rows[(int(m.group(1)), int(m.group(2)))] = vls
    return rows


def parse_vlarb(text: str) -> dict[str, Any]:
    """``smpquery vlarb`` output as ``{"low_cap", "high_cap", "low": [[vl, w]…], "high": …}``.

    >>> out = ("# VLArbitration tables: Lid 1 port 0 LowCap 2 HighCap 2\\n# Low priority VL Arbitration Table:\\n"
    ...        "VL    : |0x0 |0x1 |\\nWEIGHT: |0xFE|0x1 |\\n# High priority VL Arbitration Table:\\n"
    ...        "VL    : |0x0 |0x0 |\\nWEIGHT: |0x0 |0x0 |\\n")
    >>> parse_vlarb(out)["low"]
    [[0, 254], [1, 1]]
    """
    caps = re.search(r"LowCap (\d+) HighCap (\d+)", text)
    if not caps:
        raise ValueError("no 'LowCap N HighCap M' header in smpquery vlarb output")
    out: dict[str, Any] = {"low_cap": int(caps.group(1)), "high_cap": int(caps.group(2)), "low": [], "high": []}
    which = None
    vls: list[int] = []
    for line in text.splitlines():
        if "Low priority" in line:
            which, vls = "low", []
        elif "High priority" in line:
            which, vls = "high", []
        elif which and line.startswith("VL"):
            vls += [int(x, 16) for x in line.split("|")[1:] if x.strip()]
        elif which and line.startswith("WEIGHT"):
            weights = [int(x, 16) for x in line.split("|")[1:] if x.strip()]
            out[which] += [[v, w] for v, w in zip(vls[-len(weights):], weights)]
    return out


@checked_ints(cap=(0, 64), op_vls_code=(1, 5))
def expected_vlarb(table: list[list[int]], cap: int, op_vls_code: int) -> list[list[int]]:
    """The first ``cap`` entries a port with ``cap`` table entries and
    OperationalVLs code ``op_vls_code`` holds after OpenSM 3.3.23 programs
    ``table``: entries past the string are VL0 weight 0, and each VL is
    masked with ``2**(code-1) - 1`` (osm_qos.c).

    >>> expected_vlarb([[0, 254], [1, 1]], 4, 2)
    [[0, 254], [1, 1], [0, 0], [0, 0]]
    """
    mask = (1 << (op_vls_code - 1)) - 1
    full = [[vl & mask, w] for vl, w in table] + [[0, 0]] * 64
    return full[:cap]
