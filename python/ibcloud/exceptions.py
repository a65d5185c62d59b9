"""The exceptions ibcloud raises, one per error category of the Rust core.

::

    IbcloudError                      base of everything below
    ├── ParseError (also ValueError)  malformed file content: ``file:line: problem``
    ├── TopologyError                 inconsistent topology, bad generator parameters
    ├── LidError                      LID assignment impossible or LID data inconsistent
    ├── UnsupportedError              a format that cannot do what was asked
    ├── RoutingError                  a fabric an engine cannot route, an unknown engine
    ├── AnalysisError                 a pattern that does not fit the nodes, unknown endpoints
    ├── ReconfigError                 an event or reconfiguration that cannot be done
    ├── VSwitchError                  a refused vSwitch operation (no free VF, unknown VM, ...)
    ├── SimulationError               a simulation that cannot start, or stopped (deadlock, budget)
    ├── QosError                      a QoS/CC policy that cannot be written (unknown preset or part)
    └── InternalError                 a bug: the core panicked

File access errors are ordinary :class:`OSError` subclasses
(:class:`FileNotFoundError`, :class:`PermissionError`, ...) carrying the file name.

>>> from ibcloud import Fabric
>>> try:
...     Fabric.generate("XGFT(2;4,4;1,0)")
... except IbcloudError as err:
...     print(type(err).__name__)
TopologyError
>>> issubclass(ParseError, ValueError)
True
"""

from ibcloud._native import (
    AnalysisError,
    IbcloudError,
    InternalError,
    LidError,
    ParseError,
    QosError,
    ReconfigError,
    RoutingError,
    SaError,
    SimulationError,
    TopologyError,
    UnsupportedError,
    VSwitchError,
)

__all__ = [
    "AnalysisError",
    "IbcloudError",
    "InternalError",
    "LidError",
    "ParseError",
    "QosError",
    "ReconfigError",
    "RoutingError",
    "SaError",
    "SimulationError",
    "TopologyError",
    "UnsupportedError",
    "VSwitchError",
]


class CampaignError(IbcloudError):
    """A campaign file or results directory is wrong (names the file, line and key).

    >>> raise CampaignError("exp.toml:3: unknown key 'engin'")
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.CampaignError: exp.toml:3: unknown key 'engin'
    """


__all__.append("CampaignError")
