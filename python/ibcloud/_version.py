"""The version ``ibcloud --version`` prints, without loading the Rust core
(start-up time, docs/cli.md). It must equal the core's own
``ibcloud._native.__version__`` (the workspace version in Cargo.toml, which
maturin also gives the wheel); ``tests/unit/test_hardening.py`` checks that,
so a version bump that forgets this file fails the tests."""

VERSION = "0.1.0"
