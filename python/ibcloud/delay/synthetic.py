"""A seeded synthetic stand-in for Paper VI's University of Oslo trace, which
is not public: 405 VMs with 1,030 vCPUs, one sample per minute for 13 days,
mostly idle, with a fleet-wide burst every five minutes (the configuration
management run the paper found), a few busy VMs and day-to-day varying job
episodes.

The four ingredients that drive the paper's effects are all here and each can
be switched off for an ablation (see :class:`SyntheticParams`):

1. heterogeneous VM sizes (mostly 1–2 vCPUs, a few 4, 8 and 12);
2. a low median with a heavy tail: log-normal idle levels, a few VMs busy;
3. synchronised bursts every ``burst_period`` minutes at a common phase;
4. non-stationarity: job episodes whose rate changes by day, busy levels
   that move from day to day within a bounded range, a diurnal modulation.

The default parameters are calibrated (docs/reproductions/delay.md) so that
the paper's full-data bin counts come out (5 / 7 / 2 hosts for 12 cores at
100 % / 12 cores at 70 % / 32 cores at 100 %) and the cross-validated tables
land in the paper's decades. Same seed and parameters give the same trace,
bit for bit.

>>> t = synthetic_trace(seed=0)
>>> t.n_vms, t.vcores, t.n_samples, t.days
(405, 1030, 18720, 13.0)
>>> import numpy as np
>>> np.array_equal(synthetic_trace(seed=5, n_vms=10, days=1).cpu, synthetic_trace(seed=5, n_vms=10, days=1).cpu)
True
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Sequence, Tuple

import numpy as np

from ibcloud.delay.errors import DelayParameterError
from ibcloud.delay.trace import MINUTES_PER_DAY, Trace
from ibcloud.safeio import checked_ints

__all__ = ["SyntheticParams", "synthetic_trace", "PAPER_VM_MIX"]

#: One vCPU mix with the paper's totals (405 VMs, 1,030 vCPUs; the paper gives
#: no histogram): (vCPUs, VMs).
PAPER_VM_MIX: Tuple[Tuple[int, int], ...] = ((1, 20), (2, 337), (4, 24), (8, 12), (12, 12))


@dataclasses.dataclass(frozen=True)
class SyntheticParams:
    """Knobs of the generator; the defaults are the calibrated ones.

    >>> SyntheticParams().burst_period
    5
    >>> SyntheticParams(synchronised_bursts=False).synchronised_bursts
    False
    """

    vm_mix: Tuple[Tuple[int, int], ...] = PAPER_VM_MIX
    """(vCPUs, number of VMs) pairs."""
    idle_median: float = 0.008
    """Median idle level, fraction of each vCPU."""
    idle_sigma: float = 0.9
    """Log-normal spread of the idle level across VMs."""
    idle_noise_shape: float = 1.5
    """Gamma shape of the per-minute noise on the idle level (mean 1)."""
    burst_period: int = 5
    """Minutes between configuration-management runs."""
    burst_cores_median: float = 0.15
    """Median extra demand of one VM during a run, cores."""
    burst_sigma: float = 0.6
    """Log-normal spread of the burst size across VMs."""
    burst_noise_sigma: float = 0.35
    """Log-normal spread of one VM's burst from run to run."""
    burst_spread: int = 3
    """Minutes over which the VMs' burst phases are spread (1: all in the same
    minute; cron splay makes the fleet average look like a sinusoid)."""
    synchronised_bursts: bool = True
    """``False`` gives each VM a random phase over the whole period (ablation)."""
    busy_fraction: float = 0.045
    """Share of VMs that are busy all the time (drawn among VMs with ≥ 2 vCPUs)."""
    busy_level: Tuple[float, float] = (0.25, 0.75)
    """Range of a busy VM's level, fraction of its vCPUs, before scaling."""
    busy_cores_total: float = 21.0
    """The busy VMs' levels are scaled to add up to this many cores (capped at
    90 % of each VM's vCPUs), so the fleet's load does not hinge on which VMs
    the seed makes busy."""
    busy_day_spread: float = 0.4
    """A busy VM's level on a day is its mean × (1 ± this), uniformly: large
    but bounded day-to-day swings."""
    busy_hour_sigma: float = 0.15
    """Log-normal hour-to-hour drift of a busy VM's level."""
    busy_noise_shape: float = 1.0
    """Gamma shape of a busy VM's minute-to-minute noise (mean 1; lower is burstier)."""
    episode_vms: float = 0.3
    """Share of VMs that run jobs at all (the others never do)."""
    episode_rate: float = 4.0
    """Mean job episodes per day of a VM that runs jobs."""
    episode_day_sigma: float = 0.4
    """Log-normal spread of the episode rate from day to day (non-stationarity)."""
    episode_hours: float = 0.5
    """Mean episode length, hours (exponential)."""
    episode_level: Tuple[float, float] = (0.2, 0.7)
    """Range of an episode's demand, fraction of the VM's vCPUs."""
    diurnal_amplitude: float = 0.35
    """Relative day/night swing of idle load and episode starts (0: none)."""


def _vcpus(params: SyntheticParams, n_vms: Optional[int], rng: np.random.Generator) -> np.ndarray:
    mix = np.concatenate([np.full(count, size, dtype=np.int64) for size, count in params.vm_mix])
    if n_vms is not None:
        if n_vms < 1:
            raise DelayParameterError(f"n_vms = {n_vms}: need at least one VM")
        # A proportional subsample (or repetition) of the mix, same shape.
        mix = mix[np.floor(np.arange(n_vms) * mix.size / n_vms).astype(np.int64)]
    return rng.permutation(mix)


@checked_ints  # 0 and other bad values get the DelayParameterError below
def synthetic_trace(
    seed: int = 0,
    days: int = 13,
    n_vms: Optional[int] = None,
    params: Optional[SyntheticParams] = None,
    interval_minutes: int = 1,
) -> Trace:
    """Generates the trace described in the module documentation.

    ``n_vms`` (default: the mix's 405) takes a proportional sample of the vCPU
    mix, for small tests. ``interval_minutes`` > 1 averages the one-minute
    series into coarser samples, as a 5-minute public trace would be.

    >>> t = synthetic_trace(seed=1, days=1, n_vms=20, interval_minutes=5)
    >>> t.n_samples, t.interval_minutes
    (288, 5.0)
    """
    params = params or SyntheticParams()
    if days < 1 or int(days) != days:
        raise DelayParameterError(f"days = {days}: need a whole number of days ≥ 1")
    if interval_minutes < 1 or MINUTES_PER_DAY % interval_minutes:
        raise DelayParameterError(f"interval_minutes = {interval_minutes}: must be a whole divisor of 1440")
    rng = np.random.default_rng(seed)
    vcpus = _vcpus(params, n_vms, rng)
    n = vcpus.size
    minutes = int(days) * MINUTES_PER_DAY
    t = np.arange(minutes)
    day_of = t // MINUTES_PER_DAY
    # Diurnal profile: low at night, high in the afternoon (peak at 14:00 of
    # the trace's day; the paper's days start at 10:25, which only shifts it).
    diurnal = 1.0 + params.diurnal_amplitude * np.sin(2 * np.pi * (t % MINUTES_PER_DAY - 8 * 60) / MINUTES_PER_DAY)

    # 2. Idle level per VM, per-minute noise, diurnal swing.
    idle = params.idle_median * np.exp(params.idle_sigma * rng.standard_normal(n)) * vcpus
    k = params.idle_noise_shape
    demand = rng.gamma(k, 1.0 / k, size=(n, minutes))
    demand *= idle[:, None]
    demand *= diurnal[None, :]

    # 3. Configuration-management bursts.
    burst = params.burst_cores_median * np.exp(params.burst_sigma * rng.standard_normal(n))
    spread = max(1, min(params.burst_spread, params.burst_period))
    phase = rng.integers(0, spread if params.synchronised_bursts else params.burst_period, n)
    runs = minutes // params.burst_period + 1
    noise = np.exp(params.burst_noise_sigma * rng.standard_normal((n, runs)))
    for vm in range(n):
        at = np.arange(phase[vm], minutes, params.burst_period)
        demand[vm, at] += burst[vm] * noise[vm, : at.size]

    # 1 + 2. Busy VMs: a level drifting by day and by hour.
    n_busy = int(round(params.busy_fraction * n))
    eligible = np.flatnonzero(vcpus >= 2)
    busy = np.sort(rng.choice(eligible, size=min(n_busy, eligible.size), replace=False))
    lo, hi = params.busy_level
    levels = rng.uniform(lo, hi, busy.size) * vcpus[busy]
    if levels.sum() > 0:
        fleet = n / sum(count for _, count in params.vm_mix)  # 1 for the paper's 405 VMs
        levels *= params.busy_cores_total * fleet / levels.sum()
    levels = np.minimum(levels, 0.9 * vcpus[busy])
    hours = minutes // 60
    for vm, level in zip(busy, levels):
        by_day = 1.0 + params.busy_day_spread * rng.uniform(-1.0, 1.0, int(days))
        by_hour = np.exp(params.busy_hour_sigma * rng.standard_normal(hours))
        demand[vm] += level * by_day[day_of] * np.repeat(by_hour, 60) * rng.gamma(
            params.busy_noise_shape, 1.0 / params.busy_noise_shape, minutes)

    # 4. Job episodes: Poisson starts whose rate varies by VM and day.
    if params.episode_rate > 0:
        per_vm = (rng.random((n, 1)) < params.episode_vms).astype(float)
        per_day = np.exp(params.episode_day_sigma * rng.standard_normal((n, int(days))) - params.episode_day_sigma ** 2 / 2)
        rates = params.episode_rate * per_vm * per_day
        counts = rng.poisson(rates)
        total = int(counts.sum())
        vm_of = np.repeat(np.repeat(np.arange(n), int(days)), counts.ravel())
        day_idx = np.repeat(np.tile(np.arange(int(days)), n), counts.ravel())
        # Starts follow the diurnal profile (rejection-free: inverse CDF on a grid).
        cdf = np.cumsum(diurnal[:MINUTES_PER_DAY])
        cdf /= cdf[-1]
        start = day_idx * MINUTES_PER_DAY + np.searchsorted(cdf, rng.random(total))
        length = np.maximum(1, np.round(rng.exponential(params.episode_hours * 60, total))).astype(np.int64)
        end = np.minimum(start + length, minutes)
        elo, ehi = params.episode_level
        level = rng.uniform(elo, ehi, total) * vcpus[vm_of]
        steps = np.zeros((n, minutes + 1))
        np.add.at(steps, (vm_of, start), level)
        np.add.at(steps, (vm_of, end), -level)
        demand += np.cumsum(steps, axis=1)[:, :minutes]

    np.minimum(demand, vcpus[:, None], out=demand)
    np.maximum(demand, 0.0, out=demand)
    if interval_minutes > 1:
        demand = demand.reshape(n, minutes // interval_minutes, interval_minutes).mean(axis=2)
    ids = [f"vm{i:03d}" for i in range(n)]
    return Trace(demand, vcpus, ids, float(interval_minutes), source=f"synthetic(seed={seed})")


def ablations() -> Sequence[Tuple[str, SyntheticParams]]:
    """The default parameters with one ingredient removed at a time.

    >>> [name for name, _ in ablations()]
    ['unsynchronised bursts', 'no bursts', 'stationary days', 'no busy VMs']
    """
    base = SyntheticParams()
    return [
        ("unsynchronised bursts", dataclasses.replace(base, synchronised_bursts=False)),
        ("no bursts", dataclasses.replace(base, burst_cores_median=0.0)),
        ("stationary days", dataclasses.replace(base, episode_day_sigma=0.0, busy_day_spread=0.0)),
        ("no busy VMs", dataclasses.replace(base, busy_fraction=0.0)),
    ]
