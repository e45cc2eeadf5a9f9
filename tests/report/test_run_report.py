"""A training run's report.html from the files of a run directory: the
results in the protocol's words, the curves, predicted against measured (or
the ROC curve, its area against scikit-learn's), the worst-predicted test
molecules against a sort done here, drawn with their contributions;
evaluate --report for an existing run (a committed benchmark run, whose
predictions carry no SMILES)."""
import csv
import json
import shutil

import pytest
from sklearn.metrics import roc_auc_score

from graphormer_sepnorm.checkpoint import save_model
from graphormer_sepnorm.cli.train import evaluate_main
from graphormer_sepnorm.report.run_report import write_run_report
from graphormer_sepnorm.report.svg_plots import roc_curve

from conftest import REPO
from report_helpers import counting_predictor  # noqa: F401
from test_prediction_report import scan

PROTOCOL = 'test scored once at the end, by the best-validation checkpoint'


def make_run(run_dir, predictor, rows, task='regression'):
    run_dir.mkdir()
    results = {'dataset_title': 'counts.csv', 'task': task, 'metric': 'mae',
               'targets': ['count'], 'norm': 'sep', 'seed': 0,
               'best_val_metric': 0.1, 'best_epoch': 1, 'best_step': 8,
               'test_metric_at_best_val': 0.2, 'test_protocol': PROTOCOL,
               'epochs_completed': 2, 'steps': 8, 'num_parameters': 1000,
               'split_sizes': {'train': 8, 'val': 2, 'test': len(rows)},
               'wall_time_s': 6.0, 'hardware': {'device_name': 'cpu'},
               'model_file': 'model.safetensors',
               'test_predictions': 'test_predictions.csv'}
    (run_dir / 'results.json').write_text(json.dumps(results))
    (run_dir / 'metrics.csv').write_text(
        'epoch,step,train_loss,val_mae,test_mae\n0,4,1.0,0.5,\n1,8,0.5,0.1,\n')
    (run_dir / 'config.yaml').write_text('data:\n  name: "<i>csv</i>"\n')
    with open(run_dir / 'test_predictions.csv', 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(['id', 'smiles', 'target', 'prediction'])
        writer.writerows(rows)
    save_model(run_dir / 'model.safetensors', predictor.model, predictor.card)
    return run_dir


def test_regression_run_report(tmp_path, counting_predictor):  # noqa: F811
    rows = [[k, s, t, p] for k, (s, t, p) in enumerate(
        [('CCN', 1, 1.1), ('NCCN', 2, 0.5), ('CCC', 0, 0.3),
         ('OCCNC', 1, 3.0), ('CO', 0, 0.0), ('NC(N)N', 3, 2.2)])]
    run = make_run(tmp_path / 'run', counting_predictor, rows)
    path = write_run_report(run, worst=3)
    assert path == run / 'report.html'
    page = scan(path)
    text = path.read_text()
    assert PROTOCOL in text and '&lt;i&gt;csv&lt;/i&gt;' in text
    assert text.count('class="plot"') == 3  # loss, metric, parity
    ids = [int(cells[0]) for _, cells in page.rows]
    errors = sorted(((abs(p - t), k) for k, _, t, p in rows), reverse=True)
    assert ids == [k for _, k in errors[:3]] == [3, 1, 5]
    assert text.count('class="drawing"') == 3
    assert 'integrated gradients' in text and page.handlers == []


def test_binary_run_report_roc(tmp_path, counting_predictor):  # noqa: F811
    labels = [0, 1, 0, 1, 1, 0, 0, 1]
    scores = [0.1, 0.8, 0.8, 0.3, 0.9, 0.2, 0.4, 0.4]
    rows = [[k, 'CCN', y, p] for k, (y, p) in enumerate(zip(labels, scores))]
    run = make_run(tmp_path / 'run', counting_predictor, rows, 'binary')
    text = write_run_report(run, worst=2, steps=0).read_text()
    area = roc_auc_score(labels, scores)
    assert roc_curve(labels, scores)[2] == pytest.approx(area)
    assert f'area {area:.4f}' in text


def test_evaluate_report_on_a_committed_run(tmp_path, capsys):
    source = REPO / 'benchmarks/results/runs/zinc_subset_smiles/sep_seed0'
    run = tmp_path / 'sep_seed0'
    shutil.copytree(source, run)
    assert evaluate_main(['--checkpoint', str(run), '--report']) == 0
    text = (run / 'report.html').read_text()
    assert 'test_protocol' not in json.loads(
        (run / 'results.json').read_text())
    assert 'protocol not recorded' in text
    assert 'carry no SMILES' in text
    assert evaluate_main(['--checkpoint', str(tmp_path), '--report']) == 2
    assert 'no results.json' in capsys.readouterr().err
