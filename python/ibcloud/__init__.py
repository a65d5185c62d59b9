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

# The names below are imported when first used (PEP 562), so that
# `import ibcloud.cli.main` -- and with it `ibcloud --version` and `--help`
# -- loads neither the Rust core nor numpy/pandas (docs/cli.md, start-up time).
import sys as _sys  # noqa: E402
import types as _types  # noqa: E402

_LAZY = {
    "__version__": "ibcloud._native",
    **dict.fromkeys(["AnalysisError", "IbcloudError", "InternalError", "LidError", "ParseError", "ReconfigError",
                     "RoutingError", "TopologyError", "UnsupportedError"], "ibcloud.exceptions"),
    "Fabric": "ibcloud.fabric",
    **dict.fromkeys(["format_name", "formats", "guess_format"], "ibcloud.formats"),
    **dict.fromkeys(["FatTreeParams", "presets"], "ibcloud.generate"),
    **dict.fromkeys(["Routing", "engines", "register_engine", "route"], "ibcloud.routing"),
    **dict.fromkeys(["ForwardingTables", "read_guid2lid", "read_lfts", "write_guid2lid"], "ibcloud.tables"),
    **dict.fromkeys(["VerifyReport", "verify"], "ibcloud.verify"),
    **dict.fromkeys(["Analysis", "analyze"], "ibcloud.analysis"),
}


def __getattr__(name: str):
    import importlib

    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
    elif not name.startswith("__"):
        # A submodule used as an attribute (`ibcloud.campaign`), as when
        # this package imported them all.
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


class _Package(_types.ModuleType):
    """This package's module type: ``ibcloud.formats`` and ``ibcloud.verify``
    are functions, as they always were, not the submodules of the same name
    that the import system would otherwise bind when they are first imported."""

    def __setattr__(self, name, value):
        if name in ("formats", "verify") and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package


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
