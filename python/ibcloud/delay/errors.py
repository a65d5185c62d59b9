"""The errors of :mod:`ibcloud.delay`, both under :class:`ibcloud.IbcloudError`
so that the ``ibcloud`` command reports them as ``ibcloud: error: ...`` with
exit status 2.

* :class:`TraceError` (a :class:`~ibcloud.exceptions.ParseError`, hence also a
  :class:`ValueError`): a trace file or array that cannot be used as it is:
  unknown or missing columns, unparseable values, negative or >100 % samples,
  gaps, duplicate timestamps, VMs of unequal length. The message names the
  file and line (or row) and the problem.
* :class:`DelayParameterError` (also a :class:`ValueError`): a parameter out of
  range (threshold, cap, cores, unit, fit rule, days).

>>> try:
...     raise TraceError("t.csv:3: cpu_pct_of_one_core is -1 (negative)")
... except ValueError as err:
...     print(err)
t.csv:3: cpu_pct_of_one_core is -1 (negative)
>>> issubclass(DelayParameterError, IbcloudError)
True
"""

from __future__ import annotations

from ibcloud.exceptions import IbcloudError, ParseError

__all__ = ["DelayParameterError", "TraceError"]


class TraceError(ParseError):
    """A trace that cannot be used as it is; the message says where and why."""


class DelayParameterError(IbcloudError, ValueError):
    """A consolidation or delay parameter out of its range."""
