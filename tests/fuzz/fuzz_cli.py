"""Hostile-input harness for the ``ibcloud`` command (issue 20).

Every reader and every file-taking option is fed damaged copies of a valid
seed file (empty, binary, truncated, huge numbers, NaN/inf, a byte-order
mark, non-UTF-8 bytes, NUL, an oversized line, terminal escapes) through the
real ``ibcloud`` executable in a scratch folder, with a time limit. Each run
is classified:

``clear``      exit 2, ``ibcloud: error: ...`` naming the file, at most
               ``MAX_STDERR`` bytes of stderr, no control characters
``accepted``   exit 0/1 for a damage that can leave a valid file (a BOM, a
               truncation at a line end, a number the format allows)
``traceback``  a Python traceback on stderr
``panic``      a Rust panic / InternalError on stderr
``hang``       killed at the time limit
``unclear``    any other exit 2 (unbounded, unescaped, or not naming the file)
``wrong``      exit 0/1 for damage that must be refused (empty or binary input)
``wrote``      the run left a file behind in the scratch folder

Usage::

    python tests/fuzz/fuzz_cli.py              # the fast slice CI runs (about a minute)
    python tests/fuzz/fuzz_cli.py --long       # every target x every damage (make fuzz)
    python tests/fuzz/fuzz_cli.py --json counts.json --only sim-events

Exit status 0 when every run is ``clear`` or ``accepted``, 1 otherwise.
Selection is deterministic: the fast slice takes, per target, one damage
that must be refused and one other, both rotating with the target's index,
so every damage kind runs somewhere in CI (50 runs, well under a minute).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
MAX_STDERR = 4096
TIME_LIMIT = 60.0

# ---------------------------------------------------------------- damages


def _first_number(data: bytes) -> Optional[re.Match]:
    # A number on a data line (skips the header of CSVs and comments).
    for m in re.finditer(rb"(?<![\w.])\d+(\.\d+)?(?![\w.])", data):
        line_start = data.rfind(b"\n", 0, m.start()) + 1
        if data[line_start:line_start + 1] not in (b"#", b"["):
            return m
    return None


def _replace_number(data: bytes, text: bytes) -> bytes:
    m = _first_number(data)
    if m is None:
        return data + b"\n" + text + b"\n"
    return data[:m.start()] + text + data[m.end():]


def _middle_line(data: bytes) -> int:
    """Offset in the middle of a non-empty line near the middle of the file."""
    mid = len(data) // 2
    start = data.rfind(b"\n", 0, mid) + 1
    end = data.find(b"\n", mid)
    end = len(data) if end < 0 else end
    return start + max(1, (end - start) // 2) if end > start else mid


def _insert(data: bytes, blob: bytes) -> bytes:
    at = _middle_line(data)
    return data[:at] + blob + data[at:]


def _oversized(size: int) -> Callable[[bytes], bytes]:
    def damage(data: bytes) -> bytes:
        at = _middle_line(data)
        return data[:at] + b"A" * size + b"\x1b[2J" + data[at:]
    return damage


DAMAGES: Dict[str, Tuple[Callable[[bytes], bytes], bool]] = {
    # name: (damage, may the result still be a valid file?)
    "empty": (lambda d: b"", False),
    "binary": (lambda d: random.Random(20).randbytes(4096), False),
    "non-utf8": (lambda d: _insert(d, b"\xff\xfe\xc3("), False),
    "truncated": (lambda d: d[:_middle_line(d)], True),
    "huge-number": (lambda d: _replace_number(d, b"99999999999999999999999999"), True),
    "nan": (lambda d: _replace_number(d, b"nan"), True),
    "inf": (lambda d: _replace_number(d, b"inf"), True),
    "negative": (lambda d: _replace_number(d, b"-1"), True),
    "bom": (lambda d: b"\xef\xbb\xbf" + d, True),
    "nul": (lambda d: _insert(d, b"\x00\x00"), False),
    "escape": (lambda d: _insert(d, b"\x1b]0;pwned\x07\x1b[31m"), False),
    "oversized-line": (_oversized(2 << 20), False),
}
#: The fast slice CI runs: per target one damage that must be refused and one
#: other, both rotating with the target's index, so every kind runs somewhere.
MUST_REFUSE = ("empty", "binary", "non-utf8", "nul", "escape", "oversized-line")
ROTATING = [d for d in DAMAGES if d not in MUST_REFUSE]

# ---------------------------------------------------------------- targets


@dataclass
class Target:
    """One reader reached through the command line."""

    name: str
    argv: List[str]  # {f} is the damaged file, {d} a directory holding it
    suffix: str  # file name of the damaged input ("x.topo", "partitions.conf")
    seed: Callable[["Seeds"], bytes]
    store: bool = False  # the input is a Parquet file inside a results store copied to {d}
    accepts: Sequence[str] = field(default_factory=tuple)  # damages that may legitimately be read


class Seeds:
    """Valid inputs, made once per harness run with the ibcloud API."""

    def __init__(self, work: Path):
        self.work = work
        self._cache: Dict[str, bytes] = {}

    def file(self, name: str) -> bytes:
        if name not in self._cache:
            self._cache[name] = getattr(self, "_" + name.replace("-", "_").replace(".", "_"))()
        return self._cache[name]

    def _fabric(self, fmt: str) -> bytes:
        from ibcloud import Fabric

        path = self.work / f"seed.{fmt}"
        Fabric.generate("4-ary-2-full").write(path)
        return path.read_bytes()

    def _topo(self) -> bytes:
        return self._fabric("topo")

    def _net(self) -> bytes:
        return self._fabric("net")

    def _ibcf(self) -> bytes:
        return self._fabric("ibcf")

    def _lst(self) -> bytes:
        return (FIXTURES / "interop" / "opensm-subnet-4-ary-2-full.lst").read_bytes()

    def _dump(self) -> bytes:
        return (FIXTURES / "interop" / "fdbs" / "4-ary-2-full-minhop" / "opensm-lfts.dump").read_bytes()

    def _guid2lid(self) -> bytes:
        from ibcloud import Fabric
        from ibcloud.tables import write_guid2lid

        path = self.work / "seed.guid2lid"
        write_guid2lid(Fabric.generate("4-ary-2-full").guid2lid(), path)
        return path.read_bytes()

    def _roots(self) -> bytes:
        from ibcloud import Fabric

        nodes = Fabric.generate("4-ary-2-full").to_pandas()
        roots = nodes[(nodes.kind == "switch") & (nodes["rank"] == 0)]
        return "".join(f"0x{int(g):016x}\n" for g in roots.guid).encode()

    def _cn_guids(self) -> bytes:
        from ibcloud import Fabric

        nodes = Fabric.generate("4-ary-2-full").to_pandas()
        return "".join(f"0x{int(g) + 1:016x}\n" for g in nodes[nodes.kind == "ca"].guid).encode()

    def _partitions(self) -> bytes:
        return (b"# two partitions\nDefault=0x7fff, ipoib : ALL=full ;\n"
                b"tenant1=0x8001 : ALL_CAS=full ;\n")

    def _campaign(self) -> bytes:
        return (ROOT / "docs" / "examples" / "campaign.toml").read_bytes()

    def _trace_csv(self) -> bytes:
        return (FIXTURES / "traces" / "plain.csv").read_bytes()

    def _trace_parquet(self) -> bytes:
        import pandas as pd

        path = self.work / "seed.parquet"
        pd.read_csv(FIXTURES / "traces" / "plain.csv").to_parquet(path)
        return path.read_bytes()

    def _traffic(self) -> bytes:
        return b'{"patterns": [{"pattern": "uniform", "load": 0.5, "size": 4096}]}\n'

    def _events(self) -> bytes:
        return b'[{"time": "1us", "type": "set-destination-sl", "dst": "#0", "sl": 0}]\n'

    def _config(self) -> bytes:
        return b'{"mtu": 2048, "vls": 1, "seed": 1}\n'

    def _sim_trace(self) -> bytes:
        return b"time,src,dst,bytes\n0,#0,#1,4096\n1000,#1,#2,4096\n2000,#2,#3,8192\n"

    def _matrix(self) -> bytes:
        return b"src,dst,weight\n1,2,1.0\n2,3,0.5\n3,4,2\n"

    def _path_sls(self) -> bytes:
        return (FIXTURES / "opensm" / "dfsssp" / "torus-4x4-1" / "path-sls.dump").read_bytes()

    def _store(self) -> bytes:
        """A tiny results store (kept at work/store); the seed is one of its Parquet files."""
        store = self.work / "store"
        if not store.exists():
            toml = self.work / "c.toml"
            toml.write_text('[campaign]\nname = "fuzz"\n[[experiment]]\nkind = "route"\n'
                            'topology = "4-ary-2-full"\nengine = ["ftree", "minhop"]\n')
            subprocess.run(_ibcloud() + ["campaign", "run", str(toml), "-r", str(store), "--scheduler", "inline"],
                           check=True, capture_output=True, timeout=300)
        return sorted((store / "results").glob("*.parquet"))[0].read_bytes()


def targets() -> List[Target]:
    fab = "{d}/fabric.ibcf"  # a valid routed fabric, copied beside the damaged input
    t = [
        Target("topo-info-topo", ["topo", "info", "{f}"], "x.topo", lambda s: s.file("topo")),
        Target("topo-info-net", ["topo", "info", "{f}"], "x.net", lambda s: s.file("net")),
        Target("topo-info-lst", ["topo", "info", "{f}"], "x.lst", lambda s: s.file("lst")),
        Target("topo-info-ibcf", ["topo", "info", "{f}"], "x.ibcf", lambda s: s.file("ibcf")),
        Target("topo-convert", ["topo", "convert", "{f}", "{d}/out.net"], "x.topo", lambda s: s.file("topo")),
        Target("verify-topo", ["verify", "{f}", "--route", "minhop"], "x.topo", lambda s: s.file("topo")),
        Target("route-fabric", ["route", "{f}", "--engine", "minhop"], "x.net", lambda s: s.file("net")),
        Target("route-lids", ["route", "4-ary-2-full", "--lids", "{f}"], "guid2lid", lambda s: s.file("guid2lid"),
               accepts=("negative",)),
        Target("route-roots", ["route", "4-ary-2-full", "--engine", "updn", "--roots", "{f}"], "roots.txt",
               lambda s: s.file("roots")),
        Target("route-cn-guids", ["route", "4-ary-2-full", "--cn-guids", "{f}"], "cn_guids.txt",
               lambda s: s.file("cn-guids")),
        Target("verify-lfts", ["verify", "{d}/subnet.lst", "--lfts", "{f}"], "opensm-lfts.dump",
               lambda s: s.file("dump")),
        Target("route-compare", ["route", "--compare", "{f}", "{f}", "--fabric", "{d}/subnet.lst"],
               "opensm-lfts.dump", lambda s: s.file("dump")),
        Target("partitions-parse", ["partitions", "parse", "{f}"], "partitions.conf",
               lambda s: s.file("partitions")),
        Target("campaign-check", ["campaign", "check", "{f}"], "c.toml", lambda s: s.file("campaign")),
        Target("consolidate-csv", ["consolidate", "{f}", "--cap", "10", "--cores", "4"], "trace.csv",
               lambda s: s.file("trace-csv")),
        Target("consolidate-parquet", ["consolidate", "{f}", "--cap", "10", "--cores", "4"], "trace.parquet",
               lambda s: s.file("trace-parquet")),
        Target("sim-traffic", ["sim", "4-ary-2-full", "--route", "ftree", "--traffic", "{f}", "--time", "2us"],
               "traffic.json", lambda s: s.file("traffic")),
        Target("sim-events", ["sim", "4-ary-2-full", "--route", "ftree", "--traffic", "uniform:load=0.5",
                              "--time", "2us", "--events", "{f}"], "events.json", lambda s: s.file("events")),
        Target("sim-config", ["sim", "4-ary-2-full", "--route", "ftree", "--traffic", "uniform:load=0.5",
                              "--time", "2us", "--config", "{f}"], "config.json", lambda s: s.file("config")),
        Target("sim-trace", ["sim", "4-ary-2-full", "--route", "ftree", "--trace", "{f}", "--time", "2us"],
               "trace.csv", lambda s: s.file("sim-trace")),
        Target("analyze-matrix", ["analyze", fab, "--matrix", "{f}"], "matrix.csv", lambda s: s.file("matrix")),
        Target("analyze-nodes", ["analyze", fab, "--pattern", "shift", "--nodes", "@{f}"], "nodes.txt",
               lambda s: b"1\n2\n3\n4\n"),
        Target("verify-path-sls", ["verify", fab, "--path-sls", "{f}"], "path-sls.dump",
               lambda s: s.file("path-sls")),
        Target("results-query", ["results", "query", "{d}/store", "select count(*) from results"],
               "part.parquet", lambda s: s.file("store"), store=True),
        Target("report", ["report", "{d}/store", "-o", "{d}/store/rep"], "part.parquet",
               lambda s: s.file("store"), store=True),
    ]
    return t


# ---------------------------------------------------------------- running


def _ibcloud() -> List[str]:
    if os.environ.get("IBCLOUD_FUZZ_PYTHONPATH"):  # run another copy of the Python layer (before/after counts)
        return [sys.executable, "-m", "ibcloud.cli.main"]
    exe = Path(sys.executable).with_name("ibcloud")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "ibcloud.cli.main"]


@dataclass
class Outcome:
    target: str
    damage: str
    verdict: str
    status: Optional[int]
    seconds: float
    stderr: str


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def classify(rc: Optional[int], stderr: bytes, input_name: str, may_be_valid: bool, new_files: List[str]) -> str:
    text = stderr.decode("utf-8", "replace")
    if rc is None:
        return "hang"
    if "Traceback (most recent call last)" in text:
        return "traceback"
    if "panicked" in text or "InternalError" in text or rc < 0:
        return "panic"
    if new_files:
        return "wrote"
    if rc in (0, 1):
        return "accepted" if may_be_valid else "wrong"
    if rc == 2 and text.startswith("ibcloud: error:") and len(stderr) <= MAX_STDERR \
            and not _CONTROL.search(text) and input_name in text:
        return "clear"
    return "unclear"


def _snapshot(d: Path) -> set:
    return {str(p.relative_to(d)) for p in d.rglob("*")}


def run_one(target: Target, damage: str, seeds: Seeds, time_limit: float) -> Outcome:
    fn, may_be_valid = DAMAGES[damage]
    seed = target.seed(seeds)
    data = fn(seed)
    with tempfile.TemporaryDirectory(prefix="ibcloud-fuzz-") as tmp:
        d = Path(tmp)
        shutil.copy(seeds.work / "fabric.ibcf", d / "fabric.ibcf")
        (d / "subnet.lst").write_bytes(seeds.file("lst"))
        if target.store:
            shutil.copytree(seeds.work / "store", d / "store")
            victim = sorted((d / "store" / "results").glob("*.parquet"))[0]
            victim.write_bytes(data)
            f = victim
        else:
            f = d / target.suffix
            f.write_bytes(data)
        before = _snapshot(d)
        argv = [a.replace("{f}", str(f)).replace("{d}", str(d)) for a in target.argv]
        start = time.monotonic()
        env = dict(os.environ, COLUMNS="100")
        if os.environ.get("IBCLOUD_FUZZ_PYTHONPATH"):
            env["PYTHONPATH"] = os.environ["IBCLOUD_FUZZ_PYTHONPATH"]
        proc = subprocess.Popen(_ibcloud() + argv, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env=env, start_new_session=True)
        try:
            _, err = proc.communicate(timeout=time_limit)
            rc: Optional[int] = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            _, err = proc.communicate()
            rc = None
        seconds = time.monotonic() - start
        new = sorted(p for p in _snapshot(d) - before if not p.startswith("store/rep") or rc == 0)
        if rc in (0, 1):
            new = []  # a successful run may write what it was asked to
        verdict = classify(rc, err, f.name, may_be_valid or damage in target.accepts, new)
    return Outcome(target.name, damage, verdict, rc, round(seconds, 2), err[:600].decode("utf-8", "replace"))


def plan(long: bool, only: Optional[str]) -> List[Tuple[Target, str]]:
    jobs = []
    for i, t in enumerate(targets()):
        if only and only not in t.name:
            continue
        if long:
            chosen = list(DAMAGES)
        else:
            chosen = [MUST_REFUSE[i % len(MUST_REFUSE)], ROTATING[i % len(ROTATING)]]
        jobs.extend((t, d) for d in chosen)
    return jobs


def prepare(work: Path) -> Seeds:
    from ibcloud import Fabric
    from ibcloud.routing import route, write_tables

    seeds = Seeds(work)
    fabric = Fabric.generate("4-ary-2-full")
    write_tables(route(fabric, "ftree").tables, work / "fabric.ibcf")
    return seeds


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--long", action="store_true", help="every target x every damage")
    ap.add_argument("--only", metavar="TEXT", help="targets whose name contains TEXT")
    ap.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2)")
    ap.add_argument("--time-limit", type=float, default=TIME_LIMIT, help="seconds per run before it is a hang")
    ap.add_argument("--json", metavar="FILE", help="write the counts and every outcome as JSON")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every run")
    args = ap.parse_args(argv)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ibcloud-fuzz-seeds-") as tmp:
        seeds = prepare(Path(tmp))
        jobs = plan(args.long, args.only)
        for t, _ in jobs:  # make every seed before the threads start
            t.seed(seeds)
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            outcomes = list(pool.map(lambda j: run_one(j[0], j[1], seeds, args.time_limit), jobs))
    counts = collections.Counter(o.verdict for o in outcomes)
    bad = [o for o in outcomes if o.verdict not in ("clear", "accepted")]
    for o in outcomes:
        if args.verbose or o in bad:
            print(f"{o.verdict:<9} {o.target:<20} {o.damage:<14} exit {o.status} {o.seconds:5.1f}s "
                  f"{o.stderr.strip().splitlines()[-1][:160] if o.stderr.strip() else ''!r}")
    total = len(outcomes)
    print(f"fuzz: {total} inputs over {len({o.target for o in outcomes})} targets in "
          f"{time.monotonic() - started:.0f} s: " + ", ".join(f"{k} {counts.get(k, 0)}" for k in
          ("clear", "accepted", "traceback", "panic", "hang", "unclear", "wrong", "wrote")))
    if args.json:
        Path(args.json).write_text(json.dumps({"counts": counts, "inputs": total,
                                               "outcomes": [o.__dict__ for o in outcomes]}, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
