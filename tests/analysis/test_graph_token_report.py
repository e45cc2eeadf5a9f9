"""scripts/graph_token_analysis.py --runs on real run directories of small
untrained models (both norms, two seeds, ZINC-subset and MolHIV): which
runs it finds, the report against hand computations from its own rows, no
absolute paths, the plot, and its errors."""
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from scipy import stats

from graphormer_sepnorm import GraphormerSepNorm
from benchmarks.analysis.graph_token_report import (find_model_runs,
                                                    portable_path)
from graphormer_sepnorm.checkpoint import ModelCard, save_model
from graphormer_sepnorm.data.datasets import dataset_info

REPO = Path(__file__).resolve().parents[2]
ANALYSIS = str(REPO / 'scripts' / 'graph_token_analysis.py')
#: The recipe runs of the fixture, as the report names them.
RECIPE_RUNS = [f'runs/{dataset}/{norm}_seed{seed}'
               for dataset in ('molhiv', 'zinc_subset')
               for norm in ('sep', 'share') for seed in (0, 1)]


def write_model_run(run_dir: Path, data: dict, norm: str, seed: int,
                    **labels) -> None:
    """A run directory as the CPU protocol keeps it: an untrained
    1-layer model (float16, with its card), config.yaml and results.json
    (with :obj:`labels`, e.g. a variant)."""
    info = dataset_info(data['name'])
    torch.manual_seed(seed)
    model = GraphormerSepNorm(atom_vocab_sizes=info.atom_vocab_sizes,
                              bond_vocab_sizes=info.bond_vocab_sizes,
                              num_layers=1, hidden_channels=16,
                              ffn_channels=16, num_heads=2, norm=norm)
    run_dir.mkdir(parents=True)
    save_model(run_dir / 'model.safetensors', model,
               ModelCard({}, info.featurizer, info.task, dataset=info.title,
                         extra={'data': data, 'seed': seed}),
               dtype=torch.float16)
    (run_dir / 'config.yaml').write_text(yaml.safe_dump(
        {'seed': seed, 'data': data, 'model': {'norm': norm}}))
    (run_dir / 'results.json').write_text(json.dumps(
        {'dataset': data['name'], 'norm': norm, 'seed': seed,
         'metric': info.metric, **labels}))


@pytest.fixture(scope='module')
def workdir(zinc_root, molhiv_root, tmp_path_factory):
    """``runs/<dataset>/<norm>_seed<k>`` (24 ZINC-subset test graphs, 100
    MolHIV), a chemprop run and a Graphormer variant (both with a model
    file, to be skipped) and a run without a model."""
    root, source = zinc_root
    work = tmp_path_factory.mktemp('graph_token')
    zinc = {'name': 'zinc_subset', 'root': str(root),
            'raw_source': str(source), 'limit_test': 24}
    molhiv = {'name': 'molhiv', 'root': str(molhiv_root)}
    for dataset, data in (('zinc_subset', zinc), ('molhiv', molhiv)):
        for norm in ('sep', 'share'):
            for seed in (0, 1):
                write_model_run(work / 'runs' / dataset / f'{norm}_seed{seed}',
                                data, norm, seed)
    runs = work / 'runs'
    write_model_run(runs / 'zinc_subset_smiles' / 'sep_seed0',
                    zinc, 'sep', 0, dataset='csv', benchmark='zinc_subset',
                    variant='from SMILES')
    chemprop = runs / 'zinc_subset' / 'chemprop_seed0'
    chemprop.mkdir()
    shutil.copy(runs / 'zinc_subset' / 'sep_seed0' / 'model.safetensors',
                chemprop)
    (chemprop / 'results.json').write_text(json.dumps(
        {'dataset': 'zinc_subset', 'model_family': 'chemprop D-MPNN',
         'seed': 0}))
    trial = runs / 'zinc_subset' / 'share_seed2'
    trial.mkdir()
    (trial / 'results.json').write_text(json.dumps(
        {'dataset': 'zinc_subset', 'norm': 'share', 'seed': 2}))
    return work


@pytest.fixture(scope='module')
def analysis(workdir):
    """The script run from :obj:`workdir` on ``runs``: its output and
    report."""
    result = subprocess.run(
        [sys.executable, ANALYSIS, '--runs', 'runs', '--output-dir', 'out'],
        cwd=workdir, capture_output=True, text=True, timeout=600,
        env={**os.environ, 'OMP_NUM_THREADS': '1'})
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads((workdir / 'out' / 'graph_token_geometry.json')
                        .read_text())
    return result, report


def test_finds_the_recipe_runs_with_a_model(workdir):
    found = find_model_runs(workdir / 'runs')
    assert [p.relative_to(workdir).as_posix() for p in found] == RECIPE_RUNS


def test_weights_elsewhere_are_found_at_the_runs_paths(workdir, tmp_path):
    """--weights: kept run directories without models (run weights are not
    committed), their models at the same paths below another folder."""
    kept, weights = tmp_path / 'kept', tmp_path / 'weights'
    shutil.copytree(workdir / 'runs', kept,
                    ignore=shutil.ignore_patterns('*.safetensors'))
    shutil.copytree(workdir / 'runs', weights)
    shutil.rmtree(weights / 'molhiv' / 'share_seed1')  # a model not at hand
    found = find_model_runs(kept, weights)
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        run.replace('runs/', 'weights/', 1) for run in RECIPE_RUNS
        if run != 'runs/molhiv/share_seed1']


def test_a_folder_without_models_is_an_error(tmp_path):
    (tmp_path / 'run').mkdir()
    (tmp_path / 'run' / 'results.json').write_text('{"norm": "sep"}')
    with pytest.raises(FileNotFoundError) as error:
        find_model_runs(tmp_path)
    message = str(error.value)
    assert message.startswith(f'No Graphormer run below {tmp_path} has its '
                              f'model.safetensors in {tmp_path}')
    assert 'pass --weights' in message and '\n' not in message
    # The commit that still holds the weights of the committed runs.
    assert f"git restore --source=cabb7a1 -- '{tmp_path.as_posix()}/*/" \
        f"model.safetensors'" in message


def test_rows_are_the_recipe_runs(analysis):
    _, report = analysis
    assert report['split'] == 'test'
    assert [row['run'] for row in report['runs']] == RECIPE_RUNS
    assert [(row['dataset'], row['norm'], row['seed'], row['num_graphs'])
            for row in report['runs']] == [
        (dataset, norm, seed, 100 if dataset == 'molhiv' else 24)
        for dataset in ('molhiv', 'zinc_subset') for norm in ('sep', 'share')
        for seed in (0, 1)]
    for row in report['runs']:
        assert -4.0 <= row['uniformity'] <= 0.0
        assert -1.0 <= row['anisotropy'] <= 1.0


def test_summary_and_welch_equal_a_hand_computation(analysis):
    _, report = analysis
    summary = {(s['dataset'], s['norm']): s for s in report['summary']}
    assert list(summary) == [('molhiv', 'sep'), ('molhiv', 'share'),
                             ('zinc_subset', 'sep'), ('zinc_subset', 'share')]
    comparisons = {(c['dataset'], c['quantity']): c
                   for c in report['comparisons']}
    assert len(comparisons) == 4
    for dataset in ('molhiv', 'zinc_subset'):
        for quantity in ('uniformity', 'anisotropy'):
            a, b = ([row[quantity] for row in report['runs']
                     if (row['dataset'], row['norm']) == (dataset, norm)]
                    for norm in ('sep', 'share'))
            # Two runs: mean (x + y) / 2, sample std |x - y| / sqrt(2).
            for norm, (x, y) in (('sep', a), ('share', b)):
                entry = summary[(dataset, norm)]
                assert entry['n'] == 2
                assert entry[f'{quantity}_mean'] == pytest.approx((x + y) / 2)
                assert entry[f'{quantity}_std'] == pytest.approx(
                    abs(x - y) / math.sqrt(2))
            var_a, var_b = ((v[0] - v[1])**2 / 2 / 2 for v in (a, b))
            dof = (var_a + var_b)**2 / (var_a**2 + var_b**2)
            difference = (a[0] + a[1]) / 2 - (b[0] + b[1]) / 2
            t = difference / math.sqrt(var_a + var_b)
            c = comparisons[(dataset, quantity)]
            assert c['difference'] == pytest.approx(difference)
            assert c['dof'] == pytest.approx(dof)
            assert c['p_value'] == pytest.approx(2 * stats.t.sf(abs(t), dof))
            half = stats.t.ppf(0.975, dof) * math.sqrt(var_a + var_b)
            assert (c['low'], c['high']) == pytest.approx(
                (difference - half, difference + half))


def test_no_absolute_paths(analysis, workdir):
    result, report = analysis
    text = (workdir / 'out' / 'graph_token_geometry.json').read_text()
    assert str(workdir) not in text and str(Path.home()) not in text

    def strings(value):
        if isinstance(value, dict):
            return [s for v in value.values() for s in strings(v)]
        if isinstance(value, list):
            return [s for v in value for s in strings(v)]
        return [value] if isinstance(value, str) else []
    assert not [s for s in strings(report) if os.path.isabs(s)]
    assert 'runs/zinc_subset/sep_seed0 (zinc_subset, sep, seed 0)' in \
        result.stdout


def test_paths_outside_the_current_directory(tmp_path, monkeypatch):
    run = tmp_path / 'runs' / 'molhiv' / 'sep_seed0'
    run.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert portable_path(run) == 'runs/molhiv/sep_seed0'
    monkeypatch.chdir(REPO)
    assert portable_path(run, tmp_path / 'runs') == 'molhiv/sep_seed0'
    assert portable_path(run) == 'sep_seed0'


def test_plot_has_one_panel_per_dataset(analysis, workdir):
    from matplotlib.image import imread
    image = imread(workdir / 'out' / 'graph_token_geometry.png')
    # 6 x 4.2 inches per panel at 120 dpi, two datasets side by side.
    assert image.shape[:2] == (504, 1440)
    result, report = analysis
    assert report['plot'] == 'graph_token_geometry.png'
    assert '- **molhiv** (2 vs 2 seeds)' in result.stdout


def test_help_and_a_bad_runs_folder(tmp_path, capsys):
    from benchmarks.analysis.graph_token_cli import main
    result = subprocess.run([sys.executable, ANALYSIS, '--help'],
                            capture_output=True, text=True)
    assert result.returncode == 0 and '--runs' in result.stdout
    # The errors, from the script's main in this process.
    assert main(['--runs', str(tmp_path / 'none')]) == 2
    error = capsys.readouterr().err
    assert error.startswith('error: No run directory')
    assert len(error.strip().splitlines()) == 1
    assert main(['--checkpoint', 'a', '--weights', 'b']) == 2
    assert capsys.readouterr().err == (
        'error: --weights goes with --runs (the folder of the run '
        'directories whose models it holds)\n')


def test_plotted_density_by_hand():
    from benchmarks.analysis.graph_token_report import (_coarse,
                                                        _density)

    # Fine bins are 0.0001 wide; 3 pairs in bin 10000 ([0, 0.0001)), 1 in
    # bin 10005 of one run, 2 in bin 10165 of another: 166 occupied fine
    # bins from 10000, grouped by 3 into 56 plotted bins of 0.0003.
    counts = [np.zeros(20_000), np.zeros(20_000)]
    counts[0][[10_000, 10_005]] = (3, 1)
    counts[1][10_165] = 2
    assert _coarse(counts) == (10_000, 3, 56)
    density = _density(counts[0], 10_000, 3, 56)
    assert density[:3].tolist() == pytest.approx([3 / 4 / 0.0003, 1 / 4 /
                                                  0.0003, 0])
    assert density.sum() * 0.0003 == pytest.approx(1.0)


def test_smiles_file_mode_equals_the_predictors_embeddings(workdir,
                                                           tmp_path):
    # The molecules of a SMILES file instead of each run's split: a trained
    # model's rows must be the geometry of the embeddings Predictor.embed
    # gives (its own featurization pipeline), and a pretrained backbone,
    # which prediction refuses, is measured too. A molecule that cannot be
    # featurized is skipped.
    from graphormer_sepnorm.analysis.graph_token import (anisotropy,
                                                         uniformity)
    from benchmarks.analysis.graph_token_report import (
                                                        graph_token_report)
    from graphormer_sepnorm.predict import Predictor
    smiles = ['CCO', 'c1ccccc1O', 'CC(=O)Nc1ccc(O)cc1', 'C1CC',
              'OC(=O)c1ccccc1OC(C)=O', 'CN1CCC[C@H]1c1cccnc1', 'ClCCl']
    path = tmp_path / 'held_out.csv'
    path.write_text('id,smiles\n' + ''.join(
        f'{k},{s}\n' for k, s in enumerate(smiles)))
    run = workdir / 'runs' / 'molhiv' / 'sep_seed0'
    report = graph_token_report([run, 'bundled:pretrained-sepnorm'],
                                tmp_path / 'out', smiles_file=path)
    model_row, backbone_row = report['runs']
    # An absolute path is recorded by its name only.
    assert report['split'] == 'all' and report['molecules'] == 'held_out.csv'
    assert model_row['dataset'] == backbone_row['dataset'] == 'held_out.csv'
    embeddings = Predictor.from_checkpoint(run).embed(smiles)
    kept = torch.from_numpy(embeddings[~np.isnan(embeddings).any(1)])
    assert kept.shape[0] == model_row['num_graphs'] == 6
    assert model_row['skipped'] == backbone_row['skipped'] == 1
    assert math.isclose(model_row['uniformity'], uniformity(kept),
                        rel_tol=1e-5, abs_tol=1e-6)
    assert math.isclose(model_row['anisotropy'], anisotropy(kept),
                        rel_tol=1e-5, abs_tol=1e-6)
    assert backbone_row['norm'] == 'sep' and backbone_row['num_graphs'] == 6
    assert math.isfinite(backbone_row['anisotropy'])
    assert (tmp_path / 'out' / 'graph_token_geometry.png').is_file()


def test_smiles_file_errors_are_one_line(workdir, tmp_path, capsys):
    from benchmarks.analysis.graph_token_cli import main
    run = str(workdir / 'runs' / 'molhiv' / 'sep_seed0')
    bad = tmp_path / 'bad.smi'
    bad.write_text('C1CC\nCCO\n')
    for smiles_file, message in ((tmp_path / 'none.csv', 'does not exist'),
                                 (bad, 'the geometry needs at least two')):
        code = main(['--checkpoint', run, '--smiles', str(smiles_file),
                     '--output-dir', str(tmp_path / 'out')])
        error = capsys.readouterr().err
        assert code == 2, error[-2000:]
        assert message in error
        assert len(error.strip().splitlines()) == 1
