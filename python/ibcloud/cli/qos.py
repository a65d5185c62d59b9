"""``ibcloud qos write`` / ``ibcloud cc write``: a QoS or congestion-control
policy as OpenSM 3.3.23 configuration.

``qos write POLICY_OR_FILE [--out opensm.conf]`` prints (or writes) the QoS
options of opensm.conf: ``qos TRUE``, ``max_op_vls``, the ``qos_*`` tables
(SL2VL, VL arbitration high/low in 64-byte weights, high limit) and each
port class's ``qos_ca_*``/``qos_sw0_*``/``qos_swe_*``/``qos_rtr_*``
overrides. ``cc write`` does the same for the congestion-control options
(``congestion_control TRUE``, switch and CA congestion settings per SL, the
CCT). POLICY_OR_FILE is a preset of G Table 6 (stmax, stmaxq, drxmax,
drxmaxq, with G Table 5's IBCC values) or a TOML policy file (docs/qos.md);
a file may start from a preset and change any field. ``--cc-sls
all|bulk`` is G §9 A11: which SLs of a preset get congestion control.
``--json`` prints the tables instead. Bad input: ``ibcloud: error:
FILE:LINE: problem``, exit status 2.

>>> from ibcloud.cli.main import main
>>> main(["qos", "write", "stmaxq"])  # doctest: +ELLIPSIS
# QoS (ibcloud-qos)
qos TRUE
max_op_vls 2
qos_max_vls 2
qos_high_limit 0
qos_vlarb_high 0:0
qos_vlarb_low 0:254,1:1
qos_sl2vl 0,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1
0
"""

from __future__ import annotations

import argparse
import sys

from ibcloud.cli.main import ExitStatus
from ibcloud.safeio import atomic_write, dumps_json

__all__ = ["register"]


def _write(args: argparse.Namespace) -> int:
    from ibcloud import qos

    part = "qos" if args.command_path[0] == "qos" else "cc"
    if args.json:
        tables = qos.policy_tables(args.policy, cc_sls=args.cc_sls)
        text = dumps_json({"name": tables["name"], part: tables[part], "simulator": tables["simulator"]},
                          indent=2) + "\n"
        if tables[part] is None:
            from ibcloud.exceptions import IbcloudError

            raise IbcloudError(f"{args.policy}: the policy has no [{part}] settings")
    else:
        text = qos.opensm_conf(args.policy, part, cc_sls=args.cc_sls)
    if args.out in (None, "-"):
        sys.stdout.write(text)
    else:
        atomic_write(args.out, text)
        print(f"wrote {args.out} ({len(text.splitlines())} lines)", file=sys.stderr)
    return int(ExitStatus.SUCCESS)


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Adds ``qos write`` and ``cc write`` to the top-level parser.

    >>> parser = argparse.ArgumentParser(prog="ibcloud")
    >>> register(parser.add_subparsers())
    >>> a = parser.parse_args(["cc", "write", "drxmax", "--cc-sls", "bulk"])
    >>> a.policy, a.cc_sls, a.out
    ('drxmax', 'bulk', None)
    """
    helps = {"qos": ("QoS (SL2VL, VL arbitration, high limit) as OpenSM options", "the QoS options of opensm.conf"),
             "cc": ("congestion control (switch/CA settings, CCT) as OpenSM options",
                    "the congestion-control options of opensm.conf")}
    for name, (help_, write_help) in helps.items():
        cmd = subparsers.add_parser(name, help=help_, description=__doc__,
                                    formatter_class=argparse.RawDescriptionHelpFormatter)
        sub = cmd.add_subparsers(dest=f"{name}_command", required=True)
        w = sub.add_parser("write", help=write_help)
        w.add_argument("policy", metavar="POLICY_OR_FILE", help="stmax, stmaxq, drxmax, drxmaxq or a TOML policy file")
        w.add_argument("--out", "-o", metavar="FILE", help="write here instead of stdout")
        w.add_argument("--cc-sls", choices=["all", "bulk"], default="all",
                       help="SLs of a preset that get CC: all, or bulk = every SL but SL0 (G §9 A11; default all)")
        w.add_argument("--json", action="store_true", help="print the tables as JSON instead")
        w.set_defaults(run=_write)
