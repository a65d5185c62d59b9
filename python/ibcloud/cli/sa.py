"""``ibcloud sa``: subnet administration — resolve path records and flood a
real SM with SubnAdmGet(PathRecord) queries (Paper I's SAF).

``sa resolve FABRIC --route ENGINE SLID DLID…`` prints what an SA answers
for each pair on our routing: SL, MTU and rate (minimum over the forward and
reverse paths) and the hop counts.

``sa flood --ibsim NET|PRESET --window 1 4 16 --duration S`` starts ibsim
and OpenSM (3.3.23, the Debian package) on the fabric, resolves random CA
pairs on OpenSM's own fabric and tables, and for each window W runs the
flooder (libibumad through the umad2sim shim) keeping W queries outstanding;
every answer is checked against our resolution. Without ``--ibsim`` the
flooder talks to the SM of the local port (a real fabric, or any ibsim if
``LD_PRELOAD``/``IBSIM_SOCKNAME`` are set), checking SLID/DLID only unless
``--fabric``/``--lfts`` give the SM's fabric and tables. Exit status 1 when
any answer was malformed, mismatched, unmatched, an error or late.

``sa benchmark --ibsim NET|PRESET --mifs n --k k --rounds m`` is Paper I's
Algorithm 1 against OpenSM on ibsim: one SIF process with one query
outstanding, n MIF processes whose windows grow by k per round from round
2; per round the SIF's Q/s, mean, median, std. dev. and the total.

>>> from ibcloud.cli.main import main
>>> main(["sa", "resolve", "4-ary-2-full", "--route", "minhop", "17", "32"])  # doctest: +ELLIPSIS
SLID  DLID  SL  MTU   rate  hops fwd/rev
17    32    0   2048  40    .../...
0
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Any

from ibcloud.cli._args import lid
from ibcloud.cli.main import ExitStatus
from ibcloud.exceptions import SaError
from ibcloud.safeio import dumps_json

__all__ = ["register"]

_MTU = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
_RATE = {2: 2.5, 3: 10, 4: 30, 5: 5, 6: 20, 7: 40, 8: 60, 9: 80, 10: 120, 11: 14, 12: 56, 13: 112, 14: 168,
         15: 25, 16: 100, 17: 200, 18: 300, 19: 28, 20: 50, 21: 400, 22: 600, 23: 800, 24: 1200}


def _mtu_code(bytes_: int) -> int:
    for code, b in _MTU.items():
        if b == bytes_:
            return code
    raise SaError(f"--mtu {bytes_}: expected 256, 512, 1024, 2048 or 4096")


def _resolve(args: argparse.Namespace) -> int:
    from ibcloud import _native
    from ibcloud.cli._routed import load

    if len(args.pair_lids) % 2:
        raise SaError("give LIDs in (SLID, DLID) pairs")
    _fabric, tables, sls = load(args)
    pairs = [(args.pair_lids[i], args.pair_lids[i + 1]) for i in range(0, len(args.pair_lids), 2)]
    res = _native.sa_resolve(tables._native, pairs, getattr(sls, "_native", sls), _mtu_code(args.mtu))
    rows: list[dict[str, Any]] = []
    for (s, d), (ans, err) in zip(pairs, res):
        if ans is None:
            rows.append({"slid": s, "dlid": d, "error": err})
        else:
            rows.append({"slid": s, "dlid": d, "sl": ans[0], "mtu": _MTU[ans[1]], "rate_gbps": _RATE.get(ans[2]),
                         "rate_code": ans[2], "hops_forward": ans[3], "hops_reverse": ans[4]})
    if args.json:
        print(dumps_json(rows, indent=2))
    else:
        print(f"{'SLID':<5} {'DLID':<5} {'SL':<3} {'MTU':<5} {'rate':<5} hops fwd/rev")
        for r in rows:
            if "error" in r:
                print(f"{r['slid']:<5} {r['dlid']:<5} error: {r['error']}")
            else:
                rate = f"{r['rate_gbps']:g}"
                print(f"{r['slid']:<5} {r['dlid']:<5} {r['sl']:<3} {r['mtu']:<5} {rate:<5} "
                      f"{r['hops_forward']}/{r['hops_reverse']}")
    return int(ExitStatus.FAILURE) if any("error" in r for r in rows) else 0


def _bad(run: dict[str, Any]) -> int:
    return sum(int(run.get(k) or 0) for k in ("mismatched", "malformed", "unmatched", "status_errors", "timeouts",
                                              "send_errors"))


def _print_runs(runs: list[dict[str, Any]], title: str) -> None:
    print(title)
    print(f"{'W':>3} {'queries/s':>10} {'answered':>9} {'valid':>8} {'bad':>5} {'p50 µs':>8} {'p90 µs':>8} "
          f"{'p99 µs':>8} {'max µs':>9}")
    for r in runs:
        if "error" in r:
            print(f"{r.get('window', '?'):>3} error: {r['error']}")
            continue
        f = lambda v: f"{v:8.0f}" if v is not None else "       -"  # noqa: E731
        print(f"{r['window']:>3} {r['qps']:>10.0f} {r['answered']:>9} {r['valid']:>8} {_bad(r):>5} {f(r['p50_us'])} "
              f"{f(r['p90_us'])} {f(r['p99_us'])} {f(r['max_us'])} ")
        for e in r.get("examples", [])[:3]:
            print(f"    mismatch: {e}")


def _flood(args: argparse.Namespace) -> int:
    from ibcloud.sa.flood import flood
    from ibcloud.sa.run import expected_answers, flood_on_ibsim

    if any(w < 1 for w in args.window):
        raise SaError("--window must be at least 1")
    if args.ibsim:
        net = Path(args.ibsim)
        tmp = None
        if not net.exists():
            import tempfile

            from ibcloud import Fabric

            tmp = Path(tempfile.mkdtemp(prefix="sa-flood-"))
            net = tmp / f"{args.ibsim}.net"
            Fabric.generate(args.ibsim).write(net)
        try:
            out = flood_on_ibsim(net, args.window, duration=args.duration, num_pairs=args.pairs, seed=args.seed,
                                 mtu=_mtu_code(args.mtu), timeout_ms=args.timeout_ms)
        finally:
            if tmp is not None:
                import shutil

                shutil.rmtree(tmp, ignore_errors=True)
        runs = out["runs"]
        title = f"OpenSM on ibsim, {out['nodes']} CAs, {out['pairs']} random pairs, {args.duration:g} s per window"
    else:
        pairs: list[tuple[int, int]] = []
        expected = None
        if args.pairs_file:
            for n, line in enumerate(Path(args.pairs_file).read_text().splitlines(), 1):
                words = line.split("#", 1)[0].split()
                if not words:
                    continue
                try:
                    pairs.append((int(words[0], 0), int(words[1], 0)))
                except (ValueError, IndexError):
                    raise SaError(f"{args.pairs_file}:{n}: expected 'SLID DLID'") from None
        if args.fabric:
            from ibcloud import Fabric
            from ibcloud.tables import read_lfts

            fabric = Fabric.read(args.fabric)
            if not pairs:
                lids = sorted(n["lid"] for n in fabric.nodes() if n["kind"] == "ca")
                rng = random.Random(args.seed)
                pairs = [(rng.choice(lids), rng.choice(lids)) for _ in range(args.pairs)]
            if args.lfts:
                expected, problems = expected_answers(read_lfts(args.lfts, fabric), pairs, mtu=_mtu_code(args.mtu))
                for p in problems[:5]:
                    print(f"unresolved: {p}")
        if not pairs:
            raise SaError("no pairs: give --ibsim, --pairs-file or --fabric")
        runs = []
        for w in args.window:
            try:
                runs.append(flood(pairs, expected, window=w, duration=args.duration, timeout_ms=args.timeout_ms,
                                  sm_lid=args.sm_lid, ca=args.ca, port=args.port, seed=args.seed,
                                  random_pairs=not args.in_order).summary())
            except Exception as err:  # no device, no SM: reported, not a traceback
                runs.append({"window": w, "error": f"{type(err).__name__}: {err}"})
        title = f"SM of the local port, {len(pairs)} pairs, {args.duration:g} s per window"
    if args.json:
        print(dumps_json({"runs": runs}, indent=2))
    else:
        _print_runs(runs, title)
    failed = any("error" in r or _bad(r) > 0 or r.get("answered", 0) == 0 for r in runs)
    return int(ExitStatus.FAILURE) if failed else 0


def _benchmark(args: argparse.Namespace) -> int:
    from ibcloud.sa.run import benchmark_on_ibsim

    if args.mifs < 0 or args.mifs > 8 or args.k < 1 or args.rounds < 1 or args.round_seconds <= 0:
        raise SaError("need 0 <= --mifs <= 8 (ibsim's client limit), --k >= 1, --rounds >= 1, --round-seconds > 0")
    net = Path(args.ibsim)
    tmp = None
    if not net.exists():
        import tempfile

        from ibcloud import Fabric

        tmp = Path(tempfile.mkdtemp(prefix="sa-bench-"))
        net = tmp / f"{args.ibsim}.net"
        Fabric.generate(args.ibsim).write(net)
    try:
        out = benchmark_on_ibsim(net, mifs=args.mifs, k=args.k, rounds=args.rounds, round_s=args.round_seconds,
                                 seed=args.seed, mtu=_mtu_code(args.mtu))
    finally:
        if tmp is not None:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(dumps_json(out, indent=2))
    else:
        print(f"Algorithm 1 on OpenSM/ibsim ({out['nodes']} CAs): SIF + {args.mifs} MIFs, k = {args.k}, "
              f"{args.rounds} rounds of {args.round_seconds:g} s")
        print(f"{'round':>5} {'inst':>5} {'SIF Q/s':>8} {'mean µs':>8} {'median µs':>10} {'std µs':>8} {'total Q/s':>10}")
        f = lambda v: f"{v:8.0f}" if v is not None else "       -"  # noqa: E731
        for r in out["rounds"]:
            print(f"{r['round']:>5} {r['instances']:>5} {f(r['sif_qps'])} {f(r['sif_mean_us'])}   {f(r['sif_median_us'])} "
                  f"{f(r['sif_std_us'])}   {f(r['total_qps'])}")
        print(f"wrong answers: {out['wrong_answers']}; errors: {out['errors'] or 'none'}")
    return int(ExitStatus.FAILURE) if out["errors"] or out["wrong_answers"] else 0


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Adds ``sa`` (``resolve``, ``flood``) to the top-level parser.

    >>> parser = argparse.ArgumentParser(prog="ibcloud")
    >>> register(parser.add_subparsers())
    >>> a = parser.parse_args(["sa", "flood", "--ibsim", "ft324", "--window", "1", "4"])
    >>> a.window, a.duration
    ([1, 4], 5.0)
    """
    from ibcloud.cli._routed import add_arguments

    cmd = subparsers.add_parser("sa", help="subnet administration: resolve path records, flood an SM",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = cmd.add_subparsers(dest="sa_command", required=True)
    res = sub.add_parser("resolve", help="the PathRecord an SA answers for (SLID, DLID) pairs")
    add_arguments(res)
    res.add_argument("pair_lids", nargs="+", type=lid, metavar="LID", help="SLID DLID [SLID DLID …]")
    res.add_argument("--mtu", type=int, default=2048, help="MTU of every port in bytes (default: 2048)")
    res.add_argument("--json", action="store_true", help="print JSON")
    res.set_defaults(run=_resolve)
    fl = sub.add_parser("flood", help="flood an SM with SubnAdmGet(PathRecord) queries and check the answers")
    fl.add_argument("--ibsim", metavar="NET|PRESET", help="start ibsim + OpenSM on this net file or generator preset")
    fl.add_argument("--window", type=int, nargs="+", default=[1], metavar="W", help="queries outstanding (one run each)")
    fl.add_argument("--duration", type=float, default=5.0, help="seconds per run (default: 5)")
    fl.add_argument("--pairs", type=int, default=4096, help="random CA pairs to draw (default: 4096)")
    fl.add_argument("--pairs-file", metavar="FILE", help="'SLID DLID' per line (without --ibsim)")
    fl.add_argument("--in-order", action="store_true", help="cycle the pairs in order instead of at random")
    fl.add_argument("--fabric", metavar="FILE", help="the SM's fabric (e.g. opensm-subnet.lst; without --ibsim)")
    fl.add_argument("--lfts", metavar="FILE", help="the SM's opensm-lfts.dump, to check every answer")
    fl.add_argument("--mtu", type=int, default=2048, help="MTU of every port in bytes (default: 2048, ibsim's)")
    fl.add_argument("--timeout-ms", type=int, default=1000, help="per-query timeout (default: 1000 ms)")
    fl.add_argument("--sm-lid", type=int, help="SM LID (default: the port's SM LID)")
    fl.add_argument("--ca", help="HCA name (default: the first)")
    fl.add_argument("--port", type=int, default=0, help="HCA port (default: the first active)")
    fl.add_argument("--seed", type=int, default=1, help="seed of the random pairs")
    fl.add_argument("--json", action="store_true", help="print JSON")
    fl.set_defaults(run=_flood)
    be = sub.add_parser("benchmark", help="Paper I's Algorithm 1 (SIF + n MIFs, k more per round) on OpenSM/ibsim")
    be.add_argument("--ibsim", required=True, metavar="NET|PRESET", help="net file or generator preset")
    be.add_argument("--mifs", type=int, default=1, help="MIF flooders (n, default 1; at most 8)")
    be.add_argument("--k", type=int, default=8, help="queries each MIF adds per round (default 8)")
    be.add_argument("--rounds", type=int, default=3, help="rounds m (default 3; the paper's 25)")
    be.add_argument("--round-seconds", type=float, default=20.0, help="seconds per round (default 20)")
    be.add_argument("--mtu", type=int, default=2048, help="MTU of every port in bytes (default: 2048)")
    be.add_argument("--seed", type=int, default=1, help="seed of the random pairs")
    be.add_argument("--json", action="store_true", help="print JSON")
    be.set_defaults(run=_benchmark)
