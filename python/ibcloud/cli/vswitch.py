"""``ibcloud vswitch``, ``ibcloud migrate`` and ``ibcloud migrate-sim``: SR-IOV
vSwitches (Papers II and V).

* ``vswitch capacity --vfs V`` prints the LID-space limits of both LID
  schemes, the LRH extension and (``--share``) the hybrid option;
* ``vswitch build PHYSICAL -o OUT`` virtualizes a fabric (every CA a
  hypervisor with ``--vfs`` VFs behind a vSwitch) and boots ``--population``
  of the VFs with VMs, writing an ibsim net / ibnetdiscover / native file;
* ``migrate FABRIC --vm VM --to HYP`` live-migrates a VM and prints the SMPs,
  switches touched, predicted time and the safety verdict; FABRIC is a
  virtualized fabric file, or a physical one virtualized on the fly;
* ``migrate-sim PHYSICAL`` runs one migration simulation (Paper V §7).

Exit status: 0 on success, 1 when a migration leaves a VM unreachable or its
transition can deadlock without ``--partially-static``, 2 on bad input.

>>> from ibcloud.cli.main import main
>>> main(["vswitch", "capacity", "--vfs", "16"])  # doctest: +ELLIPSIS
prepopulated LIDs, 16 VFs per hypervisor: at most 2,891 hypervisors and 46,256 VMs
...
0
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Any, Dict, List

from ibcloud.cli._args import add_out, deprecated
from ibcloud.cli.main import ExitStatus
from ibcloud.cli.topo import _load
from ibcloud.exceptions import IbcloudError, VSwitchError
from ibcloud.fabric import Fabric
from ibcloud.safeio import dumps_json

__all__ = ["register", "load_virtual", "populate"]


def _int(low: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below {low}")
        return value
    return parse


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{value:g} is not within 0..1")
    return value


def populate(vf: Any, population: float, seed: int) -> int:
    """Boots ``population`` of the VFs with VMs ``vm0``, ``vm1``, … on random
    hypervisors with a free VF (seeded); returns the number booted.

    >>> from ibcloud.vswitch import VirtualFabric
    >>> vf = VirtualFabric.virtualize(Fabric.generate("4-ary-2-full"), vfs=2)
    >>> populate(vf, 0.5, seed=1), vf.num_vms
    (32, 32)
    """
    hyps = vf.hypervisors()
    free = {h["index"]: h["vfs"] - h["running"] for h in hyps}
    total = sum(h["vfs"] for h in hyps)
    n = round(population * total)
    rng = random.Random(seed)
    for i in range(n):
        choices = [h for h, k in free.items() if k > 0]
        h = rng.choice(choices)
        vf.boot_vm(f"vm{i}", f"#{h}")
        free[h] -= 1
    if n:
        vf.reroute()
    return n


def load_virtual(source: str, fmt: Any, scheme: str, vfs: int, population: float, seed: int) -> Any:
    """A virtual fabric from a file with vSwitches, or a physical fabric (file,
    preset or spec) virtualized with ``vfs`` VFs and ``population`` VMs.

    >>> vf = load_virtual("4-ary-2-full", None, "dynamic", 2, 0.25, 1)
    >>> vf.num_hypervisors, vf.num_vms
    (32, 16)
    """
    from ibcloud.vswitch import VirtualFabric
    fabric, _ = _load(source, fmt)
    try:
        return VirtualFabric.from_fabric(fabric, scheme)
    except VSwitchError as err:
        if "no vSwitch found" not in str(err):
            raise
    vf = VirtualFabric.virtualize(fabric, vfs, scheme)
    populate(vf, population, seed)
    return vf


def _capacity(args: argparse.Namespace) -> ExitStatus:
    """Print the LID-space limits (reference B §1.5-1.6)."""
    from ibcloud.vswitch import capacity
    c = capacity(args.vfs, args.switches, args.routers, args.others, args.hypervisors, args.extension_bits,
                 args.share, args.dedicated)
    if args.json:
        print(dumps_json(c, indent=2))
        return ExitStatus.SUCCESS
    p, d, e = c["prepopulated"], c["dynamic"], c["extension"]
    print(f"prepopulated LIDs, {args.vfs} VFs per hypervisor: at most {p['max_hypervisors']:,} hypervisors "
          f"and {p['max_vms']:,} VMs")
    print(f"dynamic LIDs, {d['hypervisors']:,} hypervisors: at most {d['max_running_vms']:,} running VMs "
          f"at a time, {d['total_vfs']:,} VFs in total (not limited by LIDs)")
    print(f"LRH extension, {e['bits']} extra bits: {e['lid_bits']}-bit LIDs, {e['vlids']:,} vLIDs, "
          f"{e['total']:,} LIDs in all")
    if c["hybrid"]:
        print(f"hybrid, {args.dedicated:.0%} of VMs on dedicated LIDs, the rest {args.share} per LID: "
              f"at most {c['hybrid']['max_vms']:,} VMs")
    return ExitStatus.SUCCESS


def _build(args: argparse.Namespace) -> ExitStatus:
    """Virtualize a fabric and write it (ibsim net, ibnetdiscover or native)."""
    from ibcloud.vswitch import VirtualFabric
    physical, label = _load(args.physical, args.format)
    vf = VirtualFabric.virtualize(physical, args.vfs, args.scheme)
    n = populate(vf, args.population, args.seed)
    fabric = vf.fabric()
    if args.output:
        fabric.write(args.output, args.out_format)
    info = {"source": label, "hypervisors": vf.num_hypervisors, "vfs": args.vfs, "scheme": args.scheme,
            "vms": n, "switches": fabric.num_switches, "cas": fabric.num_cas, "lids": fabric.lids_in_use,
            "output": args.output}
    if args.json:
        print(dumps_json(info, indent=2))
    else:
        print(f"{label}: {vf.num_hypervisors} hypervisors × {args.vfs} VFs ({args.scheme} LIDs), {n} VMs; "
              f"{fabric.num_switches} switches incl. vSwitches, {fabric.num_cas} CAs, {fabric.lids_in_use} LIDs"
              + (f" → {args.output}" if args.output else ""))
    return ExitStatus.SUCCESS


def _print_migration(r: Dict[str, Any], limit: int) -> None:
    print(f"{r['vm']} (LID {r['lid']}) {r['from']} → {r['to']}: {r['method']}, {r['scheme']} LIDs"
          + (", partially static" if r["partially_static"] else ""))
    print(f"  switch SMPs: {r['switch_smps']} to {len(r['switches_updated'])} of {r['physical_switches']} "
          f"physical switches; hypervisor SMPs: {r['hypervisor_smps']}; path computation: 0 s")
    if r["marked"]:
        print(f"  FTreeMinRC marked {len(r['marked'])} switches, {len(r['active'])} on the active route")
    if r["full_distribution_smps"]:
        print(f"  a full distribution would send {r['full_distribution_smps']} SMPs")
    print(f"  predicted time: {r['predicted_ms']:.2f} ms (active routes: {r['predicted_active_ms']:.2f} ms); "
          f"planned in {r['plan_us']:.0f} µs")
    for s in r["smps"][:limit]:
        where = f"block {s['block']}" if s["kind"] in ("Lft", "Invalidate") else f"LID {s['lid']}"
        print(f"    {s['kind']:<10} {s['node']:<28} {where}" + ("  (active)" if s["active"] else ""))
    if len(r["smps"]) > limit:
        print(f"    … {len(r['smps']) - limit} more (--all lists them)")
    if "reachable" in r:
        print(f"  reachable from every switch: {'yes' if r['reachable'] else 'NO'}")
        t = r.get("transition")
        if t:
            verdict = "deadlock-free" if t["deadlock_free"] else "can deadlock (credit loop over old ∪ new routes)"
            print(f"  transition: {verdict}" + ("" if t["deadlock_free"] else
                  "; use --partially-static" if not r["partially_static"] else "; partially static avoids it"))


def _migrate(args: argparse.Namespace) -> ExitStatus:
    """Live-migrate a VM and reconfigure (ItRC, FTreeMinRC or a full re-route)."""
    vf = load_virtual(args.fabric, args.format, args.scheme, args.vfs, args.population, args.seed)
    r = vf.migrate(args.vm, args.to, args.method, args.partially_static, apply=True, check=not args.no_check)
    if args.write:
        vf.fabric().write(args.write)
    if args.json:
        print(dumps_json(r, indent=2))
    else:
        _print_migration(r, len(r["smps"]) if args.all else 20)
    bad = r.get("reachable") is False or (
        not args.partially_static and r.get("transition", {}).get("deadlock_free") is False)
    return ExitStatus.FAILURE if bad else ExitStatus.SUCCESS


def _migrate_sim(args: argparse.Namespace) -> ExitStatus:
    """Run one migration simulation (Paper V §7)."""
    from ibcloud.vswitch import simulate
    physical, label = _load(args.physical, args.format)
    s = simulate(physical, args.vfs, args.population, args.placement, args.pattern, args.seed, args.steps,
                 args.bisect_runs, args.transition_check)
    m = s.migrations
    if args.csv:
        from ibcloud.safeio import atomic_write

        atomic_write(args.csv, m.to_csv(index=False))
    summary: Dict[str, Any] = {"fabric": label, "vms": s.raw["vms"], "hypervisors": s.raw["hypervisors"],
                               "switches": s.raw["switches"], "migrations": len(m), "unreachable": s.unreachable}
    if len(m):
        for col in ("itrc_switches", "minrc_marked", "minrc_switches", "itrc_smps", "minrc_smps",
                    "itrc_ms", "minrc_ms", "minrc_active_ms"):
            summary[f"{col}_mean"] = float(m[col].mean())
            summary[f"{col}_max"] = float(m[col].max())
        if args.transition_check:
            summary["needs_partially_static"] = int(m.needs_partially_static.sum())
    summary["snapshots"] = s.raw["snapshots"]
    if args.json:
        print(dumps_json(summary, indent=2))
    else:
        print(f"{label}: {summary['vms']} VMs on {summary['hypervisors']} hypervisors, {len(m)} migrations "
              f"({args.placement} → {args.pattern}, seed {args.seed})")
        if len(m):
            print(f"  switches updated per migration: ItRC mean {summary['itrc_switches_mean']:.2f} max "
                  f"{summary['itrc_switches_max']:.0f}; FTreeMinRC marked mean {summary['minrc_marked_mean']:.2f} "
                  f"max {summary['minrc_marked_max']:.0f}, changed mean {summary['minrc_switches_mean']:.2f} "
                  f"max {summary['minrc_switches_max']:.0f}")
            print(f"  predicted time per migration: ItRC {summary['itrc_ms_mean']:.2f} ms, FTreeMinRC "
                  f"{summary['minrc_ms_mean']:.2f} ms (active routes {summary['minrc_active_ms_mean']:.2f} ms)")
        if "needs_partially_static" in summary:
            print(f"  transitions that can deadlock (need partially static): {summary['needs_partially_static']}")
        if args.bisect_runs:
            print("  progress  EBB FTreeMinRC  EBB vSwitchFatTree")
            for snap in s.raw["snapshots"]:
                print(f"  {snap['percent']:7.1f}%  {snap['ebb_minrc']:14.4f}  {snap['ebb_fresh']:18.4f}")
        print(f"  unreachable after a migration: {s.unreachable}")
    return ExitStatus.FAILURE if s.unreachable else ExitStatus.SUCCESS


def _common(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--vfs", type=_int(1), default=4, metavar="V", help="VFs per hypervisor (default: 4)")
    cmd.add_argument("--population", type=_fraction, default=0.25, metavar="F",
                     help="fraction of the VFs that run a VM (default: 0.25)")
    cmd.add_argument("--seed", type=_int(0), default=1, metavar="S", help="seed (default: 1)")
    cmd.add_argument("--input-format", dest="format", metavar="F", help="format of the input file (default: guessed)")
    deprecated(cmd, "--format", "--input-format", "format")
    cmd.add_argument("--json", action="store_true", help="print JSON")


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Adds ``vswitch``, ``migrate`` and ``migrate-sim``.

    >>> parser = argparse.ArgumentParser(prog="ibcloud")
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["migrate", "ft324", "--vm", "vm0", "--to", "#5"]).method
    'ftree-minrc'
    """
    vs = subparsers.add_parser("vswitch", help="SR-IOV vSwitch LID capacity and virtualized fabrics",
                               description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = vs.add_subparsers(title="commands", dest="vswitch_command", metavar="COMMAND", required=True)
    cap = commands.add_parser("capacity", help=_capacity.__doc__, description=_capacity.__doc__)
    cap.add_argument("--vfs", type=_int(0), default=16, metavar="V", help="VFs per hypervisor (default: 16)")
    cap.add_argument("--switches", type=_int(0), default=0, metavar="S", help="switches (default: 0, the paper's bound)")
    cap.add_argument("--routers", type=_int(0), default=0, metavar="R", help="routers")
    cap.add_argument("--others", type=_int(0), default=0, metavar="M", help="other LID consumers (SM nodes)")
    cap.add_argument("--hypervisors", type=_int(0), default=0, metavar="H",
                     help="hypervisors for the dynamic scheme (default: the prepopulated maximum)")
    cap.add_argument("--extension-bits", type=_int(1), default=2, metavar="B", help="LRH extension bits (default: 2)")
    cap.add_argument("--share", type=_int(0), default=0, metavar="N", help="hybrid: VMs per shared LID")
    cap.add_argument("--dedicated", type=_fraction, default=0.5, metavar="F",
                     help="hybrid: fraction of VMs with a dedicated LID (default: 0.5)")
    cap.add_argument("--json", action="store_true", help="print JSON")
    cap.set_defaults(run=_capacity)

    build = commands.add_parser("build", help=_build.__doc__, description=_build.__doc__)
    build.add_argument("physical", metavar="PHYSICAL", help="physical fabric: file, preset or spec")
    add_out(build, "file to write (format from the extension)", "--output")
    build.add_argument("--output-format", dest="out_format", metavar="F",
                       help="output format (ibsim, ibnetdiscover, native, ...)")
    deprecated(build, "--out-format", "--output-format", "out_format")
    build.add_argument("--scheme", choices=("prepopulated", "dynamic"), default="dynamic", help="LID scheme")
    _common(build)
    build.set_defaults(run=_build)

    mig = subparsers.add_parser("migrate", help="live-migrate a VM and reconfigure the subnet",
                                description=_migrate.__doc__)
    mig.add_argument("fabric", metavar="FABRIC", help="virtualized fabric file, or a physical fabric to virtualize")
    mig.add_argument("--vm", required=True, help="VM name or LID")
    mig.add_argument("--to", required=True, metavar="HYPERVISOR", help="hypervisor name, PF LID or #index")
    mig.add_argument("--method", choices=("itrc", "ftree-minrc", "full"), default="ftree-minrc")
    mig.add_argument("--scheme", choices=("prepopulated", "dynamic"), default="dynamic", help="LID scheme")
    mig.add_argument("--partially-static", action="store_true", help="invalidate the LID (port 255) first")
    mig.add_argument("--no-check", action="store_true", help="skip the reachability and deadlock checks")
    mig.add_argument("--all", action="store_true", help="list every SMP")
    add_out(mig, "write the fabric after the migration", "--write", dest="write")
    _common(mig)
    mig.set_defaults(run=_migrate)

    sim = subparsers.add_parser("migrate-sim", help="simulate a migration pattern (Paper V)",
                                description=_migrate_sim.__doc__)
    sim.add_argument("physical", metavar="PHYSICAL", help="physical fat-tree: file, preset or spec")
    sim.add_argument("--placement", choices=("random", "uniform"), default="random")
    sim.add_argument("--pattern", default="random", help="random[:N], consolidate, grouping[:N], to-uniform")
    sim.add_argument("--steps", type=_int(1), default=10, metavar="N", help="snapshots every 100/N %% (default: 10)")
    sim.add_argument("--bisect-runs", type=_int(0), default=1000, metavar="N",
                     help="bisect runs per snapshot (default: 1000; the paper: 10000; 0: none)")
    sim.add_argument("--transition-check", action="store_true", help="check every transition for deadlock")
    add_out(sim, "write the per-migration statistics as CSV", "--csv", dest="csv")
    _common(sim)
    sim.set_defaults(run=_migrate_sim)
