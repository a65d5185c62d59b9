"""Runs the ``>>>`` examples in the docstrings of every module of the
``ibcloud`` package, and requires examples wherever public functions or
classes are defined."""

import doctest
import importlib
import inspect
import pkgutil

import pytest

import ibcloud

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(ibcloud.__path__, prefix="ibcloud.")
    if info.name != "ibcloud._native"
) + ["ibcloud"]


def _needs_example(obj) -> bool:
    routine = obj.__func__ if isinstance(obj, (classmethod, staticmethod)) else obj
    return inspect.isfunction(routine) or isinstance(routine, property)


def _public_api(module):
    """Dotted names of the public functions, classes, methods and properties
    defined in ``module`` (exception classes made by the Rust core excepted)."""
    names = []
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            names.append(f"{module.__name__}.{name}")
        elif inspect.isclass(obj) and not issubclass(obj, BaseException):
            names.append(f"{module.__name__}.{name}")
            names += [
                f"{module.__name__}.{name}.{attr}"
                for attr, member in vars(obj).items()
                if not attr.startswith("_") and _needs_example(member)
            ]
    return names


def test_every_module_is_collected():
    assert {"ibcloud.fabric", "ibcloud.generate", "ibcloud.formats", "ibcloud.cli.main", "ibcloud.cli.topo",
            "ibcloud.cli.run"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files stay in a scratch directory
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = [t for t in finder.find(module, name) if t.examples]
    assert tests or not any(
        inspect.isfunction(obj) or inspect.isclass(obj) for obj in vars(module).values()
        if getattr(obj, "__module__", None) == name
    ), f"{name} defines functions or classes but has no >>> examples"
    missing = sorted(set(_public_api(module)) - {t.name for t in tests})
    assert not missing, f"no >>> example for: {', '.join(missing)}"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
