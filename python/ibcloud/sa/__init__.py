"""Subnet administration (Paper I): PathRecord resolution, the SA flooder
against a running SM, and OpenSM on ibsim as the SM under test.

>>> from ibcloud.sa import expected_answers, flood_on_ibsim
>>> callable(flood_on_ibsim)
True
"""

from ibcloud.sa.flood import FloodStats, flood
from ibcloud.sa.run import OpenSmDaemon, benchmark_on_ibsim, expected_answers, flood_on_ibsim

__all__ = ["FloodStats", "OpenSmDaemon", "benchmark_on_ibsim", "expected_answers", "flood", "flood_on_ibsim"]
