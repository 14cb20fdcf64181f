"""The report in a real browser (issue 14): headless Chromium opens report.html and every
figure must decode.  Skipped when no Chromium is installed, unless
SCHEDBENCH_REQUIRE_BROWSER=1 (``make report-check`` installs Debian's chromium and sets it).

The page is opened as written, plus one script appended to a copy: after the load event it
records each image's decoded size in a ``data-figures`` attribute, which
``chromium --dump-dom`` prints."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html import unescape
from pathlib import Path

import pytest

from schedbench.analysis import report
from schedbench.sweep import run as sweep

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHECK_SCRIPT = """<script>
window.addEventListener("load", () => {
  document.body.setAttribute("data-figures", JSON.stringify(
    Array.from(document.images, (img) => [img.alt, img.complete, img.naturalWidth, img.naturalHeight])));
});
</script>
"""


def _browser() -> str | None:
    found = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if found is None and os.environ.get("SCHEDBENCH_REQUIRE_BROWSER") == "1":
        pytest.fail("no Chromium found: `make report-check` installs Debian's chromium")
    return found


def figures_in_browser(browser: str, page: Path, tmp: Path) -> list[tuple[str, bool, int, int]]:
    """[(alt, complete, natural width, natural height)] of every image of ``page`` once
    headless Chromium has loaded it."""
    html = page.read_text(encoding="utf-8")
    checked = tmp / f"checked-{page.name}"
    checked.write_text(html.replace("</body>", CHECK_SCRIPT + "</body>", 1), encoding="utf-8")
    # The flags keep Chromium off the (closed) network and need no screen or sandbox.
    cmd = [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp / 'profile'}", "--virtual-time-budget=10000", "--dump-dom", checked.as_uri(),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    found = re.search(r'data-figures="([^"]*)"', out.stdout)
    assert found, f"Chromium printed no result (exit {out.returncode}): {out.stderr[-2000:]}"
    return [tuple(item) for item in json.loads(unescape(found.group(1)))]


@pytest.fixture(scope="module")
def browser():
    found = _browser()
    if found is None:
        pytest.skip("no Chromium installed (make report-check installs it)")
    return found


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    out = tmp_path_factory.mktemp("browser")
    config = {"schedulers": ["fcfs", "easy"], "allocators": ["ff", "bf"], "seeds": [1],
              "workloads": [{"name": "esp", "generator": "esp", "machine": "16x(cores=8,gpus=2)"}]}
    sweep.sweep(sweep.expand(config), out / "results", jobs=1, progress=False)
    data = report.write_report(out / "results", out / "report")
    return data["paths"]["html"], len(data["paths"]["figures"])


def test_every_figure_loads_in_chromium(browser, rendered, tmp_path):
    page, n_figures = rendered
    figures = figures_in_browser(browser, page, tmp_path)
    assert len(figures) == n_figures >= 4  # metrics, wait CDF, queue, throughput
    for alt, complete, width, height in figures:
        assert complete and width >= 400 and height >= 200, (alt, width, height)


def test_a_broken_figure_is_caught(browser, tmp_path):
    """The check can fail: an image that does not decode has no size."""
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><html><body><img src="data:image/png;base64,AAAA" alt="broken">'
                    "</body></html>\n", encoding="utf-8")
    assert figures_in_browser(browser, page, tmp_path) == [("broken", True, 0, 0)]
