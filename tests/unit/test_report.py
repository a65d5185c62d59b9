"""The HTML report opened in headless Chromium (Debian's ``chromium``): its
tables and images render and the console stays clean. A page with a broken
image and a script error must fail the same checks (the test can fail)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from ibcloud.campaign import parse, render, run
from ibcloud.cli.main import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

CAMPAIGN = """\
[campaign]
name = "report-test"
description = "two kinds with plots"

[[experiment]]
name = "routes"
kind = "route"
topology = "4-ary-2-full"
engine = ["ftree", "minhop"]

[[experiment]]
name = "bisect"
kind = "analyze"
topology = "4-ary-2-full"
runs = 10
seed = [1, 2]

[[experiment]]
name = "moves"
kind = "migrate"
topology = "4-ary-2-full"
migrations = 4

[[experiment]]
name = "snapshots"
kind = "migration"
topology = "4-ary-2-full"
pattern = "random:6"
steps = 2
bisect_runs = 5
"""

# Injected into a copy of the page (same folder, so relative paths hold):
# after load, it writes what rendered into attributes that --dump-dom shows.
PROBE = """<script>
window.addEventListener('load', () => {
  const imgs = Array.from(document.images);
  const b = document.body;
  b.setAttribute('data-images', imgs.length);
  b.setAttribute('data-images-ok', imgs.filter(i => i.complete && i.naturalWidth > 0).length);
  b.setAttribute('data-tables', document.querySelectorAll('table').length);
  b.setAttribute('data-tables-visible', Array.from(document.querySelectorAll('table'))
    .filter(t => t.getBoundingClientRect().height > 0).length);
  b.setAttribute('data-rows', document.querySelectorAll('tbody tr').length);
  // A plot has data when it draws in colour: an empty matplotlib frame is
  // only black, grey and white (axes, ticks, labels).
  let withData = 0;
  for (const img of imgs) {
    if (!(img.complete && img.naturalWidth > 0)) continue;
    const c = document.createElement('canvas');
    c.width = img.naturalWidth; c.height = img.naturalHeight;
    const ctx = c.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const px = ctx.getImageData(0, 0, c.width, c.height).data;
    let coloured = 0;
    for (let i = 0; i < px.length; i += 4) {
      const r = px[i], g = px[i + 1], bl = px[i + 2];
      if (Math.max(r, g, bl) - Math.min(r, g, bl) > 40) coloured++;
    }
    if (coloured > 200) withData++;
  }
  b.setAttribute('data-images-with-data', withData);
});
</script>"""


def _open(page: Path) -> tuple:
    """Loads ``page`` (with the probe) in headless Chromium: (attributes, console errors)."""
    assert CHROMIUM, "chromium is missing: `make test` installs it (DEB_PACKAGES)"
    probe = page.with_name("probe-" + page.name)
    probe.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--user-data-dir=" + str(page.parent / ".chromium"), "--enable-logging=stderr", "--v=0",
                           "--virtual-time-budget=5000", "--allow-file-access-from-files", "--dump-dom",
                           probe.as_uri()],
                          capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr[-2000:]
    body = re.search(r"<body([^>]*)>", proc.stdout)
    assert body, proc.stdout[:2000]
    attrs = dict(re.findall(r'data-([a-z-]+)="(\d+)"', body.group(1)))
    console = [line for line in proc.stderr.splitlines()
               if "CONSOLE" in line or "Failed to load resource" in line or "Uncaught" in line]
    return {k: int(v) for k, v in attrs.items()}, console


def test_report_renders_in_headless_chromium(tmp_path, capsys):
    results = tmp_path / "results"
    summary = run(parse(CAMPAIGN, "report.toml"), results, scheduler="inline", progress=False)
    assert summary.complete and not summary.problems
    assert main(["report", str(results), "-o", str(tmp_path / "report")]) == 0
    page = tmp_path / "report" / "index.html"
    assert f"wrote {page}" in capsys.readouterr().out
    text = page.read_text()
    # the exact settings and versions are on the page
    assert "Campaign file" in text and 'topology = &quot;4-ary-2-full&quot;' in text
    for name in ("ibcloud", "dask", "distributed", "duckdb", "python"):
        assert f"<td class=\"l\">{name}</td>" in text
    images = re.findall(r'<img src="([^"]+)"', text)
    assert len(images) >= 3  # analyze, migrate, migration (and routes)
    for src in images:
        assert (page.parent / src).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    attrs, console = _open(page)
    assert console == []
    assert attrs["images"] == len(images) and attrs["images-ok"] == attrs["images"]
    assert attrs["images-with-data"] == attrs["images"], "a plot of the report is empty"
    assert attrs["tables"] >= 8 and attrs["tables-visible"] == attrs["tables"]
    assert attrs["rows"] > 20
    # rows are ordered by the parameters, times carry their unit
    assert "<th>route (ms)</th>" in text and "<th>time (s)</th>" in text
    assert text.index("<td class=\"l\">ftree</td>") < text.index("<td class=\"l\">minhop</td>")

    # negative control: a broken image and a script error are caught
    broken = page.with_name("broken.html")
    broken.write_text(text.replace(images[0], "img/missing.png", 1)
                      .replace("</body>", "<script>undefinedFunction();</script></body>"))
    attrs, console = _open(broken)
    assert attrs["images-ok"] == attrs["images"] - 1
    assert any("undefinedFunction" in line for line in console), console

    # negative control: an empty plot (axes without data) is caught
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.set_xlabel("migrations done (%)")
    fig.savefig(page.parent / "img" / "empty.png", dpi=90)
    plt.close(fig)
    empty = page.with_name("empty.html")
    empty.write_text(text.replace(images[0], "img/empty.png", 1))
    attrs, _ = _open(empty)
    assert attrs["images-ok"] == attrs["images"] and attrs["images-with-data"] == attrs["images"] - 1


def test_report_of_a_missing_directory_is_bad_input(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nothing"), "-o", str(tmp_path / "r")]) == 2
    assert "not a results directory" in capsys.readouterr().err


def test_reproduction_through_the_runner_and_its_report(tmp_path, capsys):
    """``ibcloud reproduce NAME`` is a one-task campaign: output printed,
    files copied to --out, results stored, and the report shows the paper's
    values beside ours."""
    out = tmp_path / "vswitch"
    options = ["--topologies", "4-ary-2-full", "--scenarios", "0", "--bisect-runs", "5", "--out", str(out)]
    assert main(["reproduce", "vswitch", *options, "--report", str(tmp_path / "report")]) == 0
    printed = capsys.readouterr().out
    assert "Scoreboard (vswitch)" in printed and "T2   construction  construction" in printed
    assert (out / "summary.json").exists() and (out / "fig8a.png").exists()
    from ibcloud.campaign import query

    checks = query(out / "campaign", "SELECT id, verdict FROM results WHERE record = 'check' ORDER BY id")
    assert len(checks) >= 8 and "not reproduced" not in set(checks.verdict)
    page = tmp_path / "report" / "index.html"
    text = page.read_text()
    assert "table2 (paper beside ours)" in text and "marking (paper beside ours)" in text
    assert "Reproduction scoreboard" in text
    attrs, console = _open(page)
    assert console == [] and attrs["images"] >= 1 and attrs["images-ok"] == attrs["images"]
    # --resume reuses the stored run; the output is the same
    assert main(["reproduce", "vswitch", *options, "--resume"]) == 0
    captured = capsys.readouterr()
    assert captured.out == printed.replace(f"wrote {page}\n", "") or "Scoreboard (vswitch)" in captured.out
    assert "1 stored result(s)" in captured.err
