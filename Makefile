# ibcloud: build, test and run from a fresh Debian machine (as root, with Rust
# and Python 3 present). Every step is idempotent; stamp files in .venv make
# repeated runs skip what is already done.
#
#   make run    build, then the tour: ft648 virtualized cloud routed, verified, migrated, analysed -> report/index.html
#   make test   Rust tests, then Python tests
#   make bench  the criterion benchmarks of the workspace
#   make fuzz   every reader and file option of the CLI fed damaged input (tests/fuzz; minutes)
#   make bench-opensm  routing side by side with OpenSM on ibsim (big trees; minutes)
#   make bench-analysis  congestion analysis on ft11664 (10,000 bisections, one shift) vs plain Python
#   make bench-delay   Paper VI's whole consolidation campaign, timed (budget 60 s)
#   make bench-reconfig  Papers III/IV reconfiguration on ft11664 vs a full ftree route
#   make bench-netsim  packet simulator speed, equal-size packets on ft324/8-ary-3 (BOOKSIM=path adds BookSim2 side by side)
#   make bench-host    virtualized-host simulator speed (F testbed, two VMs, 10 s; G's 8 hosts, 60 s)
#   make bench-vswitch FTreeMinRC marking, one migration on ft11664, the Fig. 8 campaign (sampled)
#   make bench-sm   ibcloud's SM vs OpenSM on ibsim: bring-up, one link failure and one VM migration on ft648 (SMPs, seconds)
#   make clean  remove build products, the venv and ./out

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := test
.DELETE_ON_ERROR:

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMPS := $(VENV)/.stamps

# Debian packages for the interop checks against the tools of the field.
DEB_PACKAGES := opensm ibsim-utils infiniband-diags ibutils chromium

# Build the Rust sources with the venv's interpreter, so pyo3's build
# configuration stays the same between maturin and cargo test.
export PYO3_PYTHON := $(abspath $(VPY))
export VIRTUAL_ENV := $(abspath $(VENV))

RUST_SOURCES := Cargo.toml Cargo.lock $(shell find crates -path '*/target' -prune -o \( -name '*.rs' -o -name Cargo.toml \) -print)

.PHONY: run test test-rust test-python fuzz bench bench-opensm bench-analysis bench-delay build venv system-deps clean bench-reconfig bench-netsim bench-pftree bench-vswitch bench-sa bench-host bench-sm

run: system-deps build
	$(VENV)/bin/ibcloud run

test: system-deps test-rust test-python

test-rust: $(STAMPS)/venv
	cargo test --workspace --all-targets
	cargo test --workspace --doc

test-python: build
	$(VPY) -m pytest tests/

bench: $(STAMPS)/venv
	cargo bench --workspace

bench-opensm: system-deps build
	$(VPY) bench/routing_vs_opensm.py --presets ft5832 ft11664 --engines ftree minhop updn
	$(VPY) bench/routing_vs_opensm.py --presets ft5832 --engines dfsssp

bench-analysis: build
	$(VPY) bench/analysis_speed.py --preset ft11664 --runs 10000

bench-delay: build
	$(VPY) bench/delay_campaign.py

# BOOKSIM=/path/to/booksim adds BookSim2 (built outside the project) side by side.
bench-netsim: build
	$(VPY) bench/netsim_speed.py $(if $(BOOKSIM),--booksim $(BOOKSIM))
bench-vswitch: build
	$(VPY) bench/vswitch_speed.py
bench-host: build
	$(VPY) bench/host_speed.py
	$(VPY) bench/host_speed.py --g-testbed
bench-sm: system-deps build
	$(VPY) bench/sm_vs_opensm.py --presets ft648 --engines ftree minhop --link-failure --migration

build: $(STAMPS)/build
venv: $(STAMPS)/venv

$(STAMPS)/venv: requirements-dev.txt
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --disable-pip-version-check --quiet -r requirements-dev.txt
	mkdir -p $(STAMPS) && touch $@

# maturin installs the package in editable mode: Python edits need no rebuild,
# Rust edits and pyproject.toml changes do.
$(STAMPS)/build: $(STAMPS)/venv pyproject.toml $(RUST_SOURCES)
	$(VENV)/bin/maturin develop --release
	$(VPY) -c 'import ibcloud; print("ibcloud", ibcloud.__version__, "built")'
	touch $@

# Installs the missing packages only; fails loudly when that is impossible.
system-deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:$$missing"; \
		if [ "$$(id -u)" -ne 0 ]; then echo "error: need root to install:$$missing" >&2; exit 1; fi; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update; \
		apt-get install -y --no-install-recommends $$missing; \
	fi

clean:
	cargo clean
	rm -rf $(VENV) out report .pytest_cache .hypothesis
	find python -name '_native*.so' -delete
	find python tests -name __pycache__ -type d -prune -exec rm -rf {} +

# Papers III/IV on ft11664: sub-tree (< 10 ms), SlimUpdate after a link
# failure (< 1 s), metabase phase II (< 100 ms), each beside a full ftree
# route of the same tree in the same run (best of 3).
bench-reconfig: build
	uptime
	cargo run --release -p ibcloud-reconfig --example reconfig_speed -- ft11664 3
	$(VPY) bench/reconfig_vs_papers.py

# pftree-ext with 8 partitions vs plain ftree on ft11664, same run (target: within 2x)
bench-pftree: build
	$(VPY) bench/pftree_vs_ftree.py --repeat 5

bench-sa: build
	$(VPY) bench/sa_flood.py

# Hostile-input harness (tests/fuzz): every reader and file-taking option of
# the CLI fed every kind of damaged input (CI runs a fast slice in make test).
fuzz: build
	mkdir -p out
	$(VPY) tests/fuzz/fuzz_cli.py --long --json out/fuzz.json
