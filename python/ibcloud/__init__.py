"""ibcloud: an open toolkit for virtualized InfiniBand HPC clouds.

A Rust core models InfiniBand subnets, generates the fat-trees of the
reference papers, assigns LIDs and reads and writes the file formats of the
field; this package wraps it with docs, defaults and conversions, and the
``ibcloud`` command drives it.

>>> import ibcloud
>>> f = ibcloud.Fabric.generate("ft648")
>>> f.num_cas, f.num_switches, f.summary()["full_lft_smps"]
(648, 54, 594)
"""

from ibcloud._native import __version__
from ibcloud.exceptions import (
    AnalysisError,
    IbcloudError,
    InternalError,
    LidError,
    ParseError,
    ReconfigError,
    RoutingError,
    TopologyError,
    UnsupportedError,
)
from ibcloud.fabric import Fabric
from ibcloud.formats import format_name, formats, guess_format
from ibcloud.generate import FatTreeParams, presets
from ibcloud.routing import Routing, engines, register_engine, route
from ibcloud.tables import ForwardingTables, read_guid2lid, read_lfts, write_guid2lid
from ibcloud.verify import VerifyReport, verify
from ibcloud.analysis import Analysis, analyze  # noqa: E402  (needs routing and tables)

__all__ = [
    "Analysis",
    "AnalysisError",
    "Fabric",
    "FatTreeParams",
    "ForwardingTables",
    "IbcloudError",
    "InternalError",
    "LidError",
    "ParseError",
    "ReconfigError",
    "Routing",
    "RoutingError",
    "TopologyError",
    "UnsupportedError",
    "VerifyReport",
    "__version__",
    "analyze",
    "engines",
    "format_name",
    "formats",
    "guess_format",
    "presets",
    "read_guid2lid",
    "read_lfts",
    "register_engine",
    "route",
    "verify",
    "write_guid2lid",
]
