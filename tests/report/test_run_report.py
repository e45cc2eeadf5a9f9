"""A training run's report.html from the files of a run directory: the
results in the protocol's words, the curves, predicted against measured (or
the ROC curve, its area against scikit-learn's), the worst-predicted test
molecules against a sort done here, drawn with their contributions;
evaluate --report for an existing run (a committed benchmark run, whose
predictions carry no SMILES); the SMILES of MolHIV and ZINC runs looked up
by id, checked against the datasets' own graph files."""
import csv
import gzip
import json
import shutil

import numpy as np
import pytest
from rdkit import Chem
from sklearn.metrics import roc_auc_score

from graphormer_sepnorm.checkpoint import save_model
from graphormer_sepnorm.cli.train import evaluate_main
from graphormer_sepnorm.data.text_files import open_text
from graphormer_sepnorm.report.run_report import write_run_report
from graphormer_sepnorm.report.svg_plots import roc_curve

from conftest import REPO, shared_path
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
    assert 'carry no SMILES' in text and 'dataset csv' in text
    assert evaluate_main(['--checkpoint', str(tmp_path), '--report']) == 2
    assert 'no results.json' in capsys.readouterr().err


def committed_run(tmp_path, name, raw_source):
    r"""A committed benchmark run (ids only in its predictions) copied here,
    its configuration pointing at the shared data."""
    run = tmp_path / name.replace('/', '_')
    shutil.copytree(REPO / 'benchmarks/results/runs' / name, run)
    (run / 'config.yaml').write_text(
        f"data:\n  name: {name.split('/')[0]}\n  root: {tmp_path}\n"
        f"  raw_source: {raw_source}\n")
    return run


def shown_molecules(page):
    r"""(id, SMILES) of the worst-predicted table's rows."""
    return [(int(cells[0]), cells[2]) for _, cells in page.rows]


def test_molhiv_run_draws_its_worst_molecules_by_graph_index(tmp_path):
    source = shared_path('ogbg_molhiv')
    run = committed_run(tmp_path, 'molhiv/sep_seed0', source)
    page = scan(write_run_report(run, worst=12))
    shown = shown_molecules(page)
    assert len(shown) == 12
    # The truth: OGB's own graph files (atom counts by graph index).
    with gzip.open(source / 'raw' / 'num-node-list.csv.gz', 'rt') as f:
        atoms = [int(line) for line in f]
    assert [Chem.MolFromSmiles(s).GetNumAtoms() for _, s in shown] == \
        [atoms[k] for k, _ in shown]
    text = (run / 'report.html').read_text()
    assert text.count('class="drawing"') == 12 and 'mol.csv.gz' in text


def test_zinc_run_draws_its_worst_molecules_by_split_position(tmp_path):
    run = committed_run(tmp_path, 'zinc_subset/sep_seed0',
                        shared_path('ZINC-proxy'))
    page = scan(write_run_report(run, worst=5))
    shown = shown_molecules(page)
    # The truth: the real PyG-processed test graphs (atom count, label).
    arrays = np.load(shared_path('ZINC', 'subset_partial_pyg',
                                 'test_arrays.npz'))
    ptr = arrays['x_ptr']
    assert [Chem.MolFromSmiles(s).GetNumAtoms() for _, s in shown] == \
        [int(ptr[k + 1] - ptr[k]) for k, _ in shown]
    measured = [float(cells[3]) for _, cells in page.rows]
    assert measured == pytest.approx(
        [float(arrays['y'][k]) for k, _ in shown], abs=1e-3)
    assert (run / 'report.html').read_text().count('class="drawing"') == 5


def test_run_without_smiles_says_so(tmp_path):
    run = committed_run(tmp_path, 'zinc_subset/sep_seed0', tmp_path / 'no')
    text = write_run_report(run, worst=3).read_text()
    assert 'listed by id, not drawn' in text
    assert str(tmp_path / 'no' / 'smiles' / 'test.csv') in text
    assert 'class="drawing"' not in text
    # A SMILES file of other molecules (labels differ) is not used.
    other = tmp_path / 'other' / 'smiles'
    other.mkdir(parents=True)
    kept = json.loads((run / 'results.json').read_text())['test_predictions']
    with open_text(run / kept) as f:
        rows = f.read().splitlines()
    (other / 'test.csv').write_text('smiles,y\n' + ''.join(
        f'CCO,{float(line.split(",")[1]) + 0.5}\n' for line in rows[1:]))
    run = committed_run(tmp_path / 'b', 'zinc_subset/sep_seed0',
                        tmp_path / 'other')
    text = write_run_report(run, worst=3).read_text()
    assert 'does not describe the same molecules' in text
    assert 'class="drawing"' not in text
