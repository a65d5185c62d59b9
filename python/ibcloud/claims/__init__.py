"""Claim registries of the reproductions, one TOML file per reproduction
(read with :func:`ibcloud.checks.claims`).

Each ``[[claim]]`` record: ``id``, ``claim`` (what the paper shows),
``kind`` (prediction | calibration | construction | qualitative),
``source`` (seed file and line, or reference section), ``paper`` (the
value as printed), ``tolerance`` (fixed from the paper's precision before
comparing; rules in docs/reproductions/SCOREBOARD.md), optionally
``attempted = false`` and a ``note`` (why the tolerance or the kind).

>>> from ibcloud.checks import claims
>>> sorted(claims("sa-cache"))[:2]
['CB', 'F5a']
"""
