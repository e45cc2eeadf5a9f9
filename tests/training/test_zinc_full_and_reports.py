"""The ZINC-full config end to end on a tiny local copy in PyG's raw format
(the full ZINC files are not available here), then the graph-token analysis
and the results table on the runs it wrote."""
import json
import pickle

import pytest

from conftest import shared_path
from training_helpers import REPO, TINY_MODEL, TRAIN, run_script

ANALYSIS = str(REPO / 'scripts' / 'graph_token_analysis.py')
RESULTS_TABLE = str(REPO / 'scripts' / 'results_table.py')


@pytest.fixture(scope='module')
def tiny_zinc_raw(tmp_path_factory):
    """PyG's raw ZINC layout with 48/24/24 graphs of the ZINC-proxy."""
    source = shared_path('ZINC-proxy', 'raw')
    raw = tmp_path_factory.mktemp('zinc_tiny') / 'raw'
    raw.mkdir()
    for split, count in (('train', 48), ('val', 24), ('test', 24)):
        with open(source / f'{split}.pickle', 'rb') as f:
            graphs = pickle.load(f)[:count]
        with open(raw / f'{split}.pickle', 'wb') as f:
            pickle.dump(graphs, f)
        (raw / f'{split}.index').write_text(
            ','.join(map(str, range(count))) + '\r\n')
    return raw.parent


@pytest.fixture(scope='module')
def runs(tiny_zinc_raw, tmp_path_factory):
    out = tmp_path_factory.mktemp('runs')
    data_root = tmp_path_factory.mktemp('data')
    for config in ('zinc_sepnorm', 'zinc_sharenorm'):
        result = run_script(
            TRAIN, '--config', str(REPO / 'configs' / f'{config}.yaml'),
            f'data.root={data_root}', f'data.raw_source={tiny_zinc_raw}',
            f'output_dir={out}', 'data.batch_size=16', 'train.max_steps=6',
            'optim.warmup_steps=2', 'train.progress_bar=false', *TINY_MODEL)
        assert result.returncode == 0, result.stderr[-3000:]
    return out


def test_zinc_full_configs_run_end_to_end(runs):
    for norm in ('sep', 'share'):
        results = json.loads(
            (runs / f'zinc_{norm}_seed0' / 'results.json').read_text())
        assert results['dataset'] == 'zinc' and results['norm'] == norm
        assert results['steps'] == 6
        assert results['test_metric_at_best_val'] > 0


def test_graph_token_analysis_compares_the_runs(runs, tmp_path):
    result = run_script(ANALYSIS, '--checkpoint', str(runs / 'zinc_sep_seed0'),
                        str(runs / 'zinc_share_seed0'), '--output-dir',
                        str(tmp_path))
    assert result.returncode == 0, result.stderr[-3000:]
    rows = json.loads((tmp_path / 'graph_token_geometry.json').read_text()
                      )['runs']
    assert [(row['dataset'], row['norm'], row['seed'], row['run'])
            for row in rows] == [('zinc', 'sep', 0, 'zinc_sep_seed0'),
                                 ('zinc', 'share', 0, 'zinc_share_seed0')]
    for row in rows:
        assert row['num_graphs'] == 24
        assert -4.0 <= row['uniformity'] <= 0.0
        assert -1.0 <= row['anisotropy'] <= 1.0
    assert (tmp_path / 'graph_token_geometry.png').stat().st_size > 1000
    assert 'uniformity' in result.stdout


def test_graph_token_analysis_missing_checkpoint(tmp_path):
    result = run_script(ANALYSIS, '--checkpoint', str(tmp_path / 'none'))
    assert result.returncode == 2
    assert 'does not exist' in result.stderr


def test_results_table_from_real_runs(runs, tmp_path):
    output = tmp_path / 'RESULTS.md'
    result = run_script(RESULTS_TABLE, '--runs', str(runs), '--output',
                        str(output), '--figures', str(tmp_path / 'figures'))
    assert result.returncode == 0, result.stderr[-3000:]
    table = output.read_text()
    assert '| zinc | Graphormer + SepNorm | MAE |' in table
    assert '| zinc | Graphormer (ShareNorm) | MAE |' in table
    assert (tmp_path / 'figures' / 'val_curves_zinc.png').is_file()
