r"""Screenshots of the two report kinds, and their load time in headless
Chromium (benchmarks/headless_browser.py), for the README:

* a prediction report: the bundled ``zinc-single`` model on the first
  ``--molecules`` SMILES of ZINC250k's JT-VAE test file
  (``../shared/data/zinc250k``), with atom contributions;
* a training run's report: the committed run
  ``benchmarks/results/runs/zinc_subset/sep_seed0``, whose worst-predicted
  test molecules are drawn from the SMILES the report looks up by id in
  ``ZINC-proxy/smiles/test.csv`` (its weights are not committed, so
  without atom contributions).

Writes ``benchmarks/results/report/{prediction,training_run}.png`` and
``load_times.md``.

    python benchmarks/report_screenshots.py --molecules 500
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.analysis.result_plots import quantize_png  # noqa: E402
from benchmarks.headless_browser import Browser  # noqa: E402

OUT = REPO / 'benchmarks' / 'results' / 'report'
RUN = REPO / 'benchmarks/results/runs/zinc_subset/sep_seed0'


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--molecules', type=int, default=500,
                        help='ZINC250k molecules predicted (default: 500)')
    parser.add_argument('--data', type=Path,
                        default=REPO.parent / 'shared' / 'data',
                        help='the shared data folder (default: ../shared/data)')
    args = parser.parse_args(argv)
    import torch

    from graphormer_sepnorm.predict import Predictor
    from graphormer_sepnorm.report.prediction_report import (
        ReportMolecule, ReportOptions, write_prediction_report)
    from graphormer_sepnorm.report.run_report import write_run_report
    torch.set_num_threads(1)
    OUT.mkdir(parents=True, exist_ok=True)
    smiles = (args.data / 'zinc250k' / 'jtvae_test.txt').read_text(
        ).split()[:args.molecules]
    work = Path(tempfile.mkdtemp())
    start = time.perf_counter()
    predictor = Predictor.from_bundled('zinc-single')
    rows = [ReportMolecule(k, p.smiles, [p.value], [], p.error) for k, p in
            enumerate(predictor.predict(smiles, num_workers=0), 1)]
    prediction = work / 'prediction.html'
    write_prediction_report(prediction, rows, predictor.prediction_columns,
                            predictor, ReportOptions(
                                title='Predictions: penalized logP',
                                source=f'Model: zinc-single (bundled); '
                                f'molecules: the first {len(smiles)} of '
                                f'ZINC250k (JT-VAE test file).'))
    built = time.perf_counter() - start
    run = work / RUN.name
    shutil.copytree(RUN, run)
    # The run's config.yaml names its data relative to the folder it was
    # trained in, the repository root.
    os.chdir(REPO)
    run_report = write_run_report(run)
    lines = ['# Report load times', '',
             'Headless Chromium (Debian chromium), this 2-core CPU machine; '
             'written by `benchmarks/report_screenshots.py`.', '',
             '| report | size (MB) | load (s) |', '|---|---:|---:|']
    with Browser(width=1280, height=900) as browser:
        # The run's screenshot reaches down to its first drawn molecules.
        for name, path, height in (('prediction', prediction, 900),
                                   ('training_run', run_report, 1900)):
            load = browser.open(path)
            browser.screenshot(OUT / f'{name}.png', 1280, height)
            # A palette PNG, as every committed figure (result_plots.py).
            quantize_png((OUT / f'{name}.png').read_bytes(), OUT / f'{name}.png')
            assert browser.errors == [], browser.errors
            lines.append(f'| {name} | {path.stat().st_size / 1e6:.2f} | '
                         f'{load:.2f} |')
    lines += ['', f'Prediction report built in {built:.0f} s '
              f'({len(smiles)} molecules predicted, 150 drawn with their '
              f'contributions). Training-run report of '
              f'`{RUN.relative_to(REPO)}`: 12 worst-predicted test '
              f'molecules drawn.', '']
    (OUT / 'load_times.md').write_text('\n'.join(lines))
    print('\n'.join(lines))
    shutil.rmtree(work)
    return 0


if __name__ == '__main__':
    sys.exit(main())
