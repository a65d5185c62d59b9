"""Multi-vCPU VMs through the Python API and the CLI: one output row per
vCPU (``db``, ``db/1``), the VM's cap shared by its vCPUs, and bad input
named by file and line (exit 2). About 1 s."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ibcloud.exceptions import ParseError
from ibcloud.host import Scenario, run

DOCS = Path(__file__).resolve().parents[2] / "docs" / "host.md"
IBCLOUD = str(Path(sys.executable).with_name("ibcloud"))


def _example() -> str:
    """The 2-vCPU example of docs/host.md."""
    return next(t for t in re.findall(r"```toml\n(.*?)```", DOCS.read_text(), re.S) if "vcpus = 2" in t)


def test_each_vcpu_is_a_row_and_the_cap_is_the_vms():
    text = _example()
    r = run(Scenario.from_text(text, "docs/host.md"))
    assert r.vm_names == ["db", "db/1", "peer"]
    w = r.workloads().set_index("vm")
    # cap 100 for two busy vCPUs: 100 % of one PCPU in total over two whole park cycles (credit1 bursts: each
    # vCPU runs 60 ms, is parked 60 ms), 0.12 s each.
    assert w.loc["db", "cpu_s"] == pytest.approx(0.12, abs=0.002)
    assert w.loc["db/1", "cpu_s"] == pytest.approx(0.12, abs=0.002)
    free = run(Scenario.from_text(text.replace("cap = 100\n", ""), "docs/host.md")).workloads().set_index("vm")
    assert free.loc["db", "cpu_s"] + free.loc["db/1", "cpu_s"] == pytest.approx(0.48, abs=0.005)


@pytest.mark.parametrize("old, new, where", [
    ("vcpus = 2", "vcpus = 0", r"vms\[0\]\.vcpus: 0 vCPUs: a VM has 1-64"),
    ("vcpu = 1", "vcpu = 2", r"workloads\[1\]\.vcpu: VM 'db' has 2 vCPUs \(0-1\), not vCPU 2"),
    ("cap = 100", "cap = 201", r"vms\[0\]\.cap: cap 201 is not in \(0, 200\] %"),
])
def test_bad_vcpu_input_names_file_and_line(tmp_path, old, new, where):
    text = _example().replace(old, new, 1)
    where = rf"s\.toml:{text.splitlines().index(new) + 1}: " + where  # the line of the bad key
    with pytest.raises(ParseError, match=where):
        Scenario.from_text(text, "s.toml").check()
    (tmp_path / "s.toml").write_text(text)
    cli = subprocess.run([IBCLOUD, "host", "run", str(tmp_path / "s.toml")],
                         capture_output=True, text=True)
    assert cli.returncode == 2 and re.search(r"ibcloud: error: .*" + where, cli.stderr), cli.stderr
