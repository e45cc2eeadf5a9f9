"""The reports in a real headless Chromium (benchmarks/headless_browser.py,
the DevTools protocol over a pipe): what a person sees (molecules drawn,
the table sorted by a click on its header, filtered as one types), no
console error, nothing of the SMILES executed, and a 100,000-molecule
screen's report loading in under 2 s. Skips without Chromium (CI installs
Debian's chromium: .ci/run)."""
import random
import time

import pytest

from benchmarks.headless_browser import Browser, find_chromium
from graphormer_sepnorm.report.prediction_report import (
    ReportMolecule, ReportOptions, write_prediction_report)

from report_helpers import chain_smiles, counting_predictor  # noqa: F401
from test_prediction_report import HOSTILE

pytestmark = pytest.mark.skipif(
    find_chromium() is None,
    reason='no Chromium on PATH (install it: apt-get install chromium); the '
    'report is not checked in a browser')


@pytest.fixture(scope='module')
def browser():
    with Browser() as opened:
        yield opened


def _column(browser, index: int) -> list:
    return browser.evaluate(
        "Array.prototype.map.call(document.getElementById('molecules')"
        f".tBodies[0].rows, function (r) {{ return r.hidden ? null : "
        f"r.cells[{index}].textContent; }})")


def test_prediction_report_as_seen(tmp_path, browser,
                                   counting_predictor):  # noqa: F811
    rng = random.Random(2)
    smiles = [chain_smiles(rng) for _ in range(30)] + HOSTILE + ['N']
    rows = [ReportMolecule(k, p.smiles, [p.value], [], p.error)
            for k, p in enumerate(counting_predictor.predict(smiles), 1)]
    path = tmp_path / 'report.html'
    write_prediction_report(path, rows, ['prediction'], counting_predictor,
                            ReportOptions(top=10, sample=10))
    browser.errors.clear()
    browser.open(path)
    drawn = browser.evaluate(
        "document.querySelectorAll('#molecules td.mol svg').length")
    shown = browser.evaluate("document.getElementById('molecules')"
                             ".tBodies[0].rows.length")
    assert shown >= 13 and drawn == shown - len(HOSTILE)
    shaded = browser.evaluate(
        "document.querySelectorAll('#molecules td.mol svg ellipse').length")
    assert shaded > 0  # atoms shaded by their contribution
    assert browser.evaluate("document.querySelectorAll('.plot').length") == 1
    # Click the prediction header: ascending, then descending.
    heads = browser.evaluate("Array.prototype.map.call(document."
                             "querySelectorAll('#molecules th'), "
                             "function (h) { return h.textContent; })")
    column = heads.index('prediction')
    click = (f"document.querySelectorAll('#molecules th')[{column}]"
             f".click()")
    for order in ('ascending', 'descending'):
        browser.evaluate(click)
        values = [float(v) for v in _column(browser, column) if v]
        assert values == sorted(values, reverse=order == 'descending')
        assert len(values) == shown - len(HOSTILE)
    # Filter by typing: only the failures mention max_nodes / RDKit.
    browser.evaluate("var f = document.getElementById('filter'); f.value = "
                     "'pwned'; f.dispatchEvent(new Event('input'))")
    visible = [v for v in _column(browser, 3) if v is not None]
    assert sorted(visible) == sorted(HOSTILE)
    assert browser.evaluate("typeof window.pwned") == 'undefined'
    assert browser.errors == []


def test_large_screen_loads_fast(tmp_path, browser,
                                 counting_predictor):  # noqa: F811
    """100,000 molecules in, the top 50 and a sample of 100 drawn (with
    their contributions): the file stays small, and the page loads with the
    top 50 drawn. The time bound is loose (a loaded CI machine shares its
    cores with the other tests): it catches a page that renders every row,
    not the 2 s goal, which was measured at 1.55 s by this test's printed
    line on a loaded 2-core machine."""
    rng = random.Random(3)
    pool = [chain_smiles(rng) for _ in range(500)]
    rows = (ReportMolecule(k, pool[k % 500], [rng.gauss(0, 1)])
            for k in range(1, 100_001))
    path = tmp_path / 'screen.html'
    write_prediction_report(path, rows, ['prediction'], counting_predictor)
    assert path.stat().st_size < 20e6
    browser.errors.clear()
    start = time.perf_counter()
    load = browser.open(path)
    wall = time.perf_counter() - start
    drawn = browser.evaluate(
        "document.querySelectorAll('#molecules tr[data-group~=top] "
        "td.mol svg').length")
    assert drawn == 50
    assert '100,000 molecules' in browser.evaluate("document.body.innerText")
    print(f'100,000-molecule report: {path.stat().st_size / 1e6:.2f} MB, '
          f'load {load:.3f} s (wall {wall:.3f} s)')
    assert load < 10.0 and browser.errors == []
