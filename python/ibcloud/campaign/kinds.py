"""Task kinds: what a campaign task can do, its parameters and how it runs.

Each kind declares its parameters (type, default, check) in order — the
order of the sweep axes — and a ``run(settings)`` that returns a
:class:`Outcome`: result rows (flat dicts; a ``record`` column tells row types
apart when a kind returns several) and files (name → bytes; plots, reports)
that the runner stores beside the rows. Tasks run in Dask workers, so
``run`` only uses its settings and returns plain data.

Adding a kind = one :class:`Kind` in :data:`KINDS`.

>>> sorted(KINDS)
['analyze', 'cloud', 'host', 'migrate', 'migration', 'reconfig', 'reproduce', 'route', 'sim']
>>> out = execute({"kind": "route", "topology": "4-ary-2-full", "engine": "ftree", "credit_loops": True})
>>> out.rows[0]["verify_ok"], out.rows[0]["unrouted"]
(True, 0)
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from ibcloud.exceptions import IbcloudError
from ibcloud.safeio import dumps_json

__all__ = ["KINDS", "Kind", "Outcome", "Param", "execute"]


@dataclasses.dataclass
class Outcome:
    """What a task produced: rows for the results table and files.

    >>> Outcome([{"x": 1}]).files
    {}
    """

    rows: List[Dict[str, Any]]
    files: Dict[str, bytes] = dataclasses.field(default_factory=dict)
    seconds: float = 0.0
    status: int = 0


@dataclasses.dataclass(frozen=True)
class Param:
    """A kind's parameter: type (``int``, ``float``, ``str``, ``bool``,
    ``list`` of strings, ``scenario``: a TOML file name or an inline
    table), default, whether it is required, allowed choices and bounds.

    >>> Param("int", 10, minimum=0).check(3)
    3
    >>> Param("int", 10, minimum=0).check(-1)
    Traceback (most recent call last):
    ...
    ValueError: must be at least 0
    """

    type: str
    default: Any = None
    required: bool = False
    choices: Optional[Sequence[str]] = None
    minimum: Optional[float] = None
    maximum: Optional[float] = None
    doc: str = ""

    @property
    def is_list(self) -> bool:
        """True for a list-valued parameter (never a sweep axis).

        >>> Param("list", []).is_list
        True
        """
        return self.type == "list"

    def check(self, value: Any) -> Any:
        """Returns ``value`` checked (ints accepted for floats), or raises ValueError.

        >>> Param("float", 0.5, minimum=0, maximum=1).check(1)
        1.0
        """
        if self.type == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError("must be an integer")
        elif self.type == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError("must be a number")
            value = float(value)
            if not math.isfinite(value):
                raise ValueError("must be finite")
        elif self.type == "str":
            if not isinstance(value, str):
                raise ValueError("must be a string")
        elif self.type == "bool":
            if not isinstance(value, bool):
                raise ValueError("must be true or false")
        elif self.type == "list":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError("must be a list of strings")
        elif self.type == "scenario":
            if not isinstance(value, (str, dict)):
                raise ValueError("must be a scenario file name or an inline table")
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"must be one of {', '.join(self.choices)}")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"must be at least {self.minimum:g}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"must be at most {self.maximum:g}")
        return value


@dataclasses.dataclass(frozen=True)
class Kind:
    """A task kind: description, parameters (in sweep order), a cross-check of
    one resolved combination (raises ValueError naming the key first) and
    the function that runs it.

    >>> KINDS["route"].params["engine"].default
    'ftree'
    """

    description: str
    params: Dict[str, Param]
    run: Callable[[Dict[str, Any]], Outcome]
    cross_check: Optional[Callable[[Dict[str, Any]], None]] = None

    def validate(self, params: Dict[str, Any]) -> None:
        """Checks one resolved combination of parameters.

        >>> KINDS["route"].validate({"topology": "ft324", "engine": "nosuch", "credit_loops": True})
        Traceback (most recent call last):
        ...
        ValueError: engine = "nosuch": unknown routing engine (known: ...)
        """
        if "engine" in params:
            from ibcloud.routing import engines

            known = [name for name, _ in engines()]
            if params["engine"] not in known:
                raise ValueError(f"engine = \"{params['engine']}\": unknown routing engine (known: {', '.join(known)})")
        if self.cross_check is not None:
            self.cross_check(params)


def _fabric(spec: str) -> Any:
    from ibcloud.fabric import Fabric

    return Fabric.read(spec) if os.path.sep in spec or Path(spec).suffix else Fabric.generate(spec)


def _plot_bytes(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buf.getvalue()


# ---------------------------------------------------------------- route
def _route(s: Dict[str, Any]) -> Outcome:
    from ibcloud.routing import route
    from ibcloud.verify import verify

    fabric = _fabric(s["topology"])
    routing = route(fabric, s["engine"])
    rep = verify(routing, credit_loops=s["credit_loops"])
    d = rep.data
    credit = d.get("credit_loops") or {}
    row = {
        "cas": fabric.num_cas, "switches": fabric.num_switches, "links": fabric.num_links, "max_lid": fabric.max_lid,
        "route_ms": routing.seconds * 1e3, "unrouted": int(routing.tables.unrouted()),
        "pairs": d.get("pairs"), "reachable": d.get("reachable"),
        "credit_loop_free": bool(credit.get("acyclic")) if credit else None,
        "verify_ok": bool(rep.ok),
    }
    return Outcome([row], status=0 if rep.ok and not row["unrouted"] else 1)


# ---------------------------------------------------------------- analyze
def _analyze(s: Dict[str, Any]) -> Outcome:
    from ibcloud.analysis import analyze
    from ibcloud.routing import route

    fabric = _fabric(s["topology"])
    routing = route(fabric, s["engine"])
    res = analyze(routing, s["pattern"], runs=s["runs"], seed=s["seed"], threads=1)
    row: Dict[str, Any] = {"routing_ms": routing.seconds * 1e3, "broken_flows": int(res.broken_flows)}
    if s["pattern"] == "bisect":
        row.update({f"ebb_{k}": float(v) for k, v in res.ebb().items()})
    runs = res.runs
    for col in ("acc_band", "max_cong"):
        if col in runs:
            row[f"{col}_mean"] = float(runs[col].mean())
    return Outcome([row], status=1 if res.broken_flows else 0)


# ---------------------------------------------------------------- cloud
def _populate(s: Dict[str, Any]) -> Any:
    """The virtualized cloud of a task: hypervisors with ``vfs`` VFs, a
    ``population`` share of all VF slots holding VMs (placed at random with
    ``seed``, or round robin), routed afresh with vSwitchFatTree."""
    import random

    from ibcloud.vswitch import VirtualFabric

    vf = VirtualFabric.virtualize(_fabric(s["topology"]), vfs=s["vfs"], scheme=s["scheme"])
    hyps = [h["name"] for h in vf.hypervisors()]
    slots = [(h, k) for k in range(s["vfs"]) for h in hyps]  # round robin: one VM per hypervisor first
    if s["placement"] == "random":
        random.Random(s["seed"]).shuffle(slots)
    for i, (hyp, _) in enumerate(slots[: round(s["population"] * len(slots))]):
        vf.boot_vm(f"vm{i:05d}", hyp)
    vf.reroute()
    return vf


def _cloud(s: Dict[str, Any]) -> Outcome:
    from ibcloud.verify import verify

    start = time.perf_counter()
    vf = _populate(s)
    build_s = time.perf_counter() - start
    start = time.perf_counter()
    vf.reroute()
    route_s = time.perf_counter() - start
    check = vf.check()
    tables = vf.tables()
    fabric = vf.fabric()
    rep = verify(tables, credit_loops=True)
    d = rep.data
    credit = d.get("credit_loops") or {}
    row = {"hypervisors": vf.num_hypervisors, "vms": vf.num_vms, "vf_slots": vf.num_hypervisors * s["vfs"],
           "cas": fabric.num_cas, "switches": fabric.num_switches, "max_lid": fabric.max_lid,
           "build_s": build_s, "route_ms": route_s * 1e3,
           "lids_checked": int(check.get("checked", 0)), "lid_walk_problems": len(check.get("problems", [])),
           "lid_walk_dead_ends": int(check.get("dead_ends", 0)), "lid_walk_loops": int(check.get("loops", 0)),
           "pairs": d.get("pairs"), "reachable": d.get("reachable"),
           "credit_loop_free": bool(credit.get("acyclic")) if credit else None, "verify_ok": bool(rep.ok)}
    ok = rep.ok and not row["lid_walk_problems"] and not row["lid_walk_dead_ends"] and not row["lid_walk_loops"]
    return Outcome([row], status=0 if ok else 1)


# ---------------------------------------------------------------- migrate (three methods)
def _migrate(s: Dict[str, Any]) -> Outcome:
    """Random live migrations on the cloud; each planned with ItRC,
    FTreeMinRC and a full vSwitchFatTree re-route (all on the same tables),
    the ``apply`` method's plan applied."""
    import random

    vf = _populate(s)
    rng = random.Random(s["seed"] + 1)
    hyps = [h["name"] for h in vf.hypervisors()]
    rows: List[Dict[str, Any]] = []
    for i in range(s["migrations"]):
        vms = [v["name"] for v in vf.vms()]
        free = [h["name"] for h in vf.hypervisors() if h["running"] < h["vfs"]]
        vm = rng.choice(vms)
        here = next(v.get("hypervisor") for v in vf.vms() if v["name"] == vm)
        targets = [h for h in free if h != here] or [h for h in hyps if h != here]
        dst = rng.choice(targets)
        row: Dict[str, Any] = {"record": "migration", "step": i, "vm": vm, "from": here, "to": dst}
        for method in ("itrc", "ftree-minrc", "full"):
            plan = vf.migrate(vm, dst, method=method, apply=False, check=(method == s["apply"]))
            key = method.replace("-", "_")
            row[f"{key}_switch_smps"] = int(plan["switch_smps"])
            row[f"{key}_switches_updated"] = len(plan["switches_updated"])
            row[f"{key}_time_ms"] = float(plan["predicted_ms"])
            if method == "full" and isinstance(plan.get("full_distribution_smps"), (int, float)):
                row["full_distribution_smps"] = plan["full_distribution_smps"]
            if method == s["apply"]:
                row["reachable"] = bool(plan.get("reachable", True))
                row["transition_deadlock_free"] = bool((plan.get("transition") or {}).get("deadlock_free", True))
        vf.migrate(vm, dst, method=s["apply"], check=False)
        rows.append(row)
    summary: Dict[str, Any] = {"record": "summary", "migrations": len(rows)}
    if rows:
        import pandas as pd

        frame = pd.DataFrame(rows)
        for col in frame.columns:
            if col.endswith(("_switch_smps", "_switches_updated", "_time_ms")) or col == "full_distribution_smps":
                summary[f"{col}_mean"] = float(frame[col].mean())
        summary["unreachable"] = int((~frame["reachable"].astype(bool)).sum()) if "reachable" in frame else 0
    check = vf.check()
    summary["final_lid_walk_problems"] = len(check.get("problems", [])) + int(check.get("loops", 0)) + \
        int(check.get("dead_ends", 0))
    if rows:
        summary["transition_deadlock_free_share"] = float(pd.DataFrame(rows)["transition_deadlock_free"].mean())
    bad = summary.get("unreachable", 0) or summary["final_lid_walk_problems"]
    return Outcome([summary] + rows, status=1 if bad else 0)


# ---------------------------------------------------------------- migration
def _migration(s: Dict[str, Any]) -> Outcome:
    from ibcloud.vswitch import simulate

    sim = simulate(_fabric(s["topology"]), s["vfs"], s["population"], s["placement"], s["pattern"], s["seed"],
                   s["steps"], s["bisect_runs"], s["transition_check"])
    mig = sim.migrations
    summary: Dict[str, Any] = {"record": "summary", "migrations": int(len(mig)), "unreachable": int(sim.unreachable)}
    for col in mig.columns:
        if mig[col].dtype.kind in "iuf" and col not in ("index", "vm", "step", "src", "dst"):
            summary[f"{col}_mean"] = float(mig[col].mean())
            summary[f"{col}_total"] = float(mig[col].sum())
    rows = [summary]
    for snap in sim.snapshots.to_dict("records"):
        rows.append({"record": "snapshot", **{k: (float(v) if isinstance(v, float) else v) for k, v in snap.items()}})
    return Outcome(rows, status=1 if sim.unreachable else 0)


# ---------------------------------------------------------------- reconfig
def _reconfig(s: Dict[str, Any]) -> Outcome:
    from ibcloud.reconfig import reconfigure
    from ibcloud.routing import route

    fabric = _fabric(s["topology"])
    tables = route(fabric, s["engine"]).tables
    targets = s["target"].split() if s["target"] else []
    event = None if s["event"] == "none" else s["event"]
    rec = reconfigure(fabric, tables, event, *targets, method=s["method"], paths=s["paths"])
    rep = rec.report
    # `unreachable_pairs` counts pairs the event cut off physically; pairs the
    # new tables fail to route (e.g. a sub-tree re-route after a fault) are
    # reported separately so a failed check never reads as "0 unreachable".
    check = rep.get("check") or {}
    row: Dict[str, Any] = {
        "ok": bool(rec.ok),
        "unreachable_pairs": rep.get("unreachable_pairs", 0),
        "unrouted_pairs": int(check.get("pairs", 0)) - int(check.get("reachable", 0)),
    }
    for k, v in rec.changes.items():
        if isinstance(v, (int, float)):
            row[k] = v
    for k, v in rep.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in row:
            row[k] = v
    return Outcome([row], status=0 if rec.ok else 1)


# ---------------------------------------------------------------- sim
def _sim(s: Dict[str, Any]) -> Outcome:
    from ibcloud.routing import route
    from ibcloud.sim import simulate

    tables = route(_fabric(s["topology"]), s["engine"]).tables
    res = simulate(tables, s["traffic"], s["time"], seed=s["seed"])
    flows = res.flows
    row = {
        "flows": int(len(flows)), "gbps_total": float(flows["gbps"].sum()) if len(flows) else 0.0,
        "gbps_mean": float(flows["gbps"].mean()) if len(flows) else 0.0,
        "latency_us_mean": float(flows["mean_latency_us"].mean()) if len(flows) else math.nan,
        "dropped": int(res.dropped), "events": int(res.events), "sim_wall_s": float(res.wall_seconds),
    }
    return Outcome([row])


# ---------------------------------------------------------------- host
def _host(s: Dict[str, Any]) -> Outcome:
    """One host-simulator run (``ibcloud host run``): a ``run`` row and one
    ``vm`` row per VM (its workload's figures, CPU and I/O over the run,
    request latencies), summary.json and the per-VM samples as CSV."""
    from ibcloud.host import Scenario, run

    data = dict(s["scenario"])
    if s["seed"] is not None:
        data["seed"] = s["seed"]
    res = run(Scenario(data, "campaign scenario"))
    summary = res.summary()
    samples, lat = res.samples(), res.latencies()
    by_vm = {w["vm"]: w for w in summary["workloads"]}
    rows: List[Dict[str, Any]] = [{"record": "run", "end_s": float(res.end_s), "events": int(res.events),
                                   "vms": len(res.vm_names), "actions": int(summary["actions"])}]
    for vm in res.vm_names:
        row: Dict[str, Any] = {"record": "vm", "vm": vm}
        for key, value in by_vm.get(vm, {}).items():
            if key != "vm" and (value is None or isinstance(value, (int, float, str, bool))):
                row[f"workload_{key}" if key in ("kind", "bytes") else key] = value
        mine = samples[samples.vm == vm] if len(samples) else samples
        row["cpu_pct_mean"] = float(mine["cpu_pct"].mean()) if len(mine) else math.nan
        row["sampled_bytes"] = int(mine["bytes"].sum()) if len(mine) else 0
        row["cqes"] = int(mine["cqes"].sum()) if len(mine) else 0
        lv = lat[lat.vm == vm]["latency_us"] if len(lat) else lat
        row["requests_timed"] = int(len(lv))
        row["latency_us_mean"] = float(lv.mean()) if len(lv) else math.nan
        row["latency_us_p99"] = float(lv.quantile(0.99)) if len(lv) else math.nan
        rows.append(row)
    files = {"summary.json": dumps_json(summary, indent=1, default=str).encode(),
             "samples.csv": samples.to_csv(index=False).encode()}
    return Outcome(rows, files)


# ---------------------------------------------------------------- reproduce
def _reproduce(s: Dict[str, Any]) -> Outcome:
    import argparse
    import importlib

    from ibcloud.cli.reproduce import REPRODUCTIONS

    module = importlib.import_module(REPRODUCTIONS[s["reproduction"]][0])
    parser = argparse.ArgumentParser(prog=f"ibcloud reproduce {s['reproduction']}")
    module.configure(parser)
    files: Dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="ibcloud-reproduce-") as tmp:
        options = parser.parse_args(list(s["options"]) + ["--out", tmp])
        text = io.StringIO()
        try:
            with contextlib.redirect_stdout(text):
                status = int(module.run(options))
        except IbcloudError as err:
            # Bad input found by the reproduction itself (a short trace, an impossible size): the user's
            # mistake, not a crash. The CLI turns this row back into "ibcloud: error: ..." with status 2.
            return Outcome([{"record": "summary", "status": 2, "output": text.getvalue(), "json": "",
                             "error": str(err)}], {}, status=2)
        for path in sorted(Path(tmp).rglob("*")):
            if path.is_file() and path.suffix in (".png", ".csv", ".json", ".md", ".txt", ".parquet") and path.stat().st_size < 5_000_000:
                files[str(path.relative_to(tmp))] = path.read_bytes()
    out = text.getvalue()
    data: Any = None
    if "summary.json" in files:
        try:
            data = json.loads(files["summary.json"])
        except ValueError:
            data = None
    if data is None:
        try:
            data = json.loads(out)
        except ValueError:
            data = None
    rows: List[Dict[str, Any]] = [{"record": "summary", "status": status, "output": out,
                                   "json": dumps_json(data, default=str) if data is not None else ""}]
    checks = data.get("checks") if isinstance(data, dict) else None
    if isinstance(checks, list):
        for check in checks:
            if isinstance(check, dict):
                rows.append({"record": "check", **{k: (v if isinstance(v, (int, float, str, bool)) or v is None
                                                       else dumps_json(v)) for k, v in check.items()}})
    return Outcome(rows, files, status=status)


def _reproduce_check(p: Dict[str, Any]) -> None:
    from ibcloud.cli.reproduce import REPRODUCTIONS

    if p["reproduction"] not in REPRODUCTIONS:
        raise ValueError(f"reproduction = \"{p['reproduction']}\": unknown reproduction (known: {', '.join(REPRODUCTIONS)})")
    if any(o == "--out" or o.startswith("--out=") for o in p["options"]):
        raise ValueError("options: --out is set by the campaign runner (files go to the results directory)")


def _analyze_check(p: Dict[str, Any]) -> None:
    from ibcloud.analysis import patterns

    if p["pattern"] not in patterns():
        raise ValueError(f"pattern = \"{p['pattern']}\": unknown pattern (known: {', '.join(patterns())})")


def _migrate_check(p: Dict[str, Any]) -> None:
    if p["population"] * p["vfs"] >= p["vfs"] and p["migrations"] > 0:
        raise ValueError("population = 1: every VF slot is full, a VM has nowhere to migrate")
    if p["population"] == 0 and p["migrations"] > 0:
        raise ValueError("population = 0: no VM to migrate")


def _migration_check(p: Dict[str, Any]) -> None:
    name = p["pattern"].split(":", 1)[0]
    if name not in ("random", "consolidate", "grouping", "to-uniform"):
        raise ValueError(f"pattern = \"{p['pattern']}\": unknown migration pattern "
                         "(random[:N], consolidate, grouping[:N], to-uniform)")


_TOPO = Param("str", required=True, doc="preset, generator spec (XGFT/PGFT/K-ary-N) or fabric file")
_ENGINE = Param("str", "ftree", doc="routing engine")

#: The task kinds, by name.
KINDS: Dict[str, Kind] = {
    "route": Kind("route a fabric and verify it (reachability, loops, credit loops)", {
        "topology": _TOPO, "engine": _ENGINE,
        "credit_loops": Param("bool", True, doc="check credit loops (deadlock freedom)")}, _route),
    "analyze": Kind("congestion analysis of a routed fabric (ORCS patterns)", {
        "topology": _TOPO, "engine": _ENGINE,
        "pattern": Param("str", "bisect", doc="traffic pattern (ibcloud analyze --list-patterns)"),
        "runs": Param("int", 100, minimum=0, maximum=10_000_000, doc="pattern runs"),
        "seed": Param("int", 1, minimum=0, doc="random seed")}, _analyze, _analyze_check),
    "cloud": Kind("the virtualized cloud: vSwitch hypervisors, VMs, vSwitchFatTree, verified", {
        "topology": _TOPO,
        "vfs": Param("int", 4, minimum=1, maximum=252, doc="VFs per hypervisor"),
        "population": Param("float", 0.5, minimum=0.0, maximum=1.0, doc="share of VF slots holding a VM"),
        "placement": Param("str", "random", choices=("random", "uniform"), doc="VM placement"),
        "scheme": Param("str", "dynamic", choices=("dynamic", "prepopulated"), doc="LID scheme"),
        "seed": Param("int", 1, minimum=0, doc="random seed")}, _cloud),
    "migrate": Kind("random live migrations, each planned with ItRC, FTreeMinRC and a full re-route", {
        "topology": _TOPO,
        "vfs": Param("int", 4, minimum=1, maximum=252, doc="VFs per hypervisor"),
        "population": Param("float", 0.5, minimum=0.0, maximum=1.0, doc="share of VF slots holding a VM"),
        "placement": Param("str", "random", choices=("random", "uniform"), doc="VM placement"),
        "scheme": Param("str", "dynamic", choices=("dynamic", "prepopulated"), doc="LID scheme"),
        "migrations": Param("int", 20, minimum=0, maximum=1_000_000, doc="migrations"),
        "apply": Param("str", "ftree-minrc", choices=("itrc", "ftree-minrc", "full"), doc="method whose plan is applied"),
        "seed": Param("int", 1, minimum=0, doc="random seed")}, _migrate, _migrate_check),
    "migration": Kind("vSwitch live-migration campaign: ItRC vs FTreeMinRC vs fresh vSwitchFatTree", {
        "topology": _TOPO,
        "vfs": Param("int", 4, minimum=1, maximum=252, doc="VFs per hypervisor"),
        "population": Param("float", 0.5, minimum=0.0, maximum=1.0, doc="share of VF slots holding a VM"),
        "placement": Param("str", "random", choices=("random", "uniform"), doc="initial VM placement"),
        "pattern": Param("str", "random", doc="migration pattern: random[:N], consolidate, grouping[:N], to-uniform"),
        "seed": Param("int", 1, minimum=0, doc="random seed"),
        "steps": Param("int", 10, minimum=1, maximum=1000, doc="snapshots (every 100/steps %)"),
        "bisect_runs": Param("int", 200, minimum=0, maximum=10_000_000, doc="bisections per snapshot"),
        "transition_check": Param("bool", False, doc="check every transition for deadlock")},
        _migration, _migration_check),
    "reconfig": Kind("a fabric event and the reconfiguration that answers it (Papers III/IV)", {
        "topology": _TOPO, "engine": _ENGINE,
        "event": Param("str", "none", choices=("none", "fail-link", "restore-link", "fail-switch", "restore-switch",
                                               "shutdown", "boot"), doc="fabric event"),
        "target": Param("str", "", doc="event target: 'NODE:PORT' or 'NODE' (blank-separated for several)"),
        "method": Param("str", "slimupdate", choices=("full", "subtree", "slimupdate", "metabase"),
                        doc="reconfiguration method"),
        "paths": Param("bool", False, doc="count changed source-destination paths")}, _reconfig),
    "sim": Kind("packet-level simulation run (ibcloud sim)", {
        "topology": _TOPO, "engine": _ENGINE,
        "traffic": Param("str", required=True, doc="traffic spec (see docs/netsim.md)"),
        "time": Param("str", "100us", doc="simulated time"),
        "seed": Param("int", 1, minimum=0, doc="random seed")}, _sim),
    "host": Kind("a host-simulator scenario (ibcloud host run): per-VM summary rows", {
        "scenario": Param("scenario", required=True,
                          doc="TOML file (relative to the campaign file) or inline table; see docs/host.md"),
        "seed": Param("int", None, minimum=0, doc="overrides the scenario's seed (default: its own)")}, _host),
    "reproduce": Kind("a paper reproduction (ibcloud reproduce NAME)", {
        "reproduction": Param("str", required=True, doc="reproduction name (ibcloud reproduce --list)"),
        "options": Param("list", [], doc="its command-line options, e.g. [\"--quick\"]")},
        _reproduce, _reproduce_check),
}


def execute(settings: Dict[str, Any]) -> Outcome:
    """Runs one task from its resolved settings (in a Dask worker or here).

    >>> execute({"kind": "analyze", "topology": "4-ary-2-full", "engine": "ftree", "pattern": "bisect",
    ...          "runs": 5, "seed": 1}).rows[0]["broken_flows"]
    0
    """
    kind = KINDS[settings["kind"]]
    params = {k: settings[k] for k in kind.params}
    start = time.perf_counter()
    try:
        outcome = kind.run(params)
    except SystemExit as exit:  # argparse and sys.exit in task code must not kill a Dask worker
        raise RuntimeError(f"task exited with status {exit.code}") from None
    outcome.seconds = time.perf_counter() - start
    return outcome
