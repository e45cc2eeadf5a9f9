"""The bundled-models table of scripts/README.md: generated from the model
cards of the member files, and the committed README holds exactly what the
installed members' cards say."""
from pathlib import Path

from benchmarks.analysis.readme_blocks import readme_markers
from graphormer_sepnorm.bundled import BUNDLED_MODELS, member_filename
from benchmarks.bundling.summary import bundled_models_markdown
from graphormer_sepnorm.checkpoint import save_model

from bundle_helpers import tiny_model, zinc_card

REPO = Path(__file__).resolve().parents[2]


def _member(folder: Path, seed: int, evaluation: dict,
            init_from: dict | None = None) -> Path:
    card = zinc_card({'name': 'zinc_subset'})
    card.extra.update({
        'dataset': 'zinc_subset', 'kind': 'final run', 'norm': 'sep',
        'seed': seed, 'epochs': 36, 'steps': 5652, 'cpu_time_s': 1602.0,
        'hardware': {'device_name': 'Test CPU (2 cores)'},
        'evaluation': evaluation, 'note': 'a | note',
        'init_from': init_from})
    path = folder / member_filename('zinc', seed)
    save_model(path, tiny_model(seed), card)
    return path


def test_rows_come_from_the_cards(tmp_path):
    path = _member(tmp_path, 2, {
        'val': {'metric': 'mae', 'value': 0.38877, 'num_graphs': 1000},
        'test': {'metric': 'mae', 'value': 0.42854, 'num_graphs': 1000}})
    lines = bundled_models_markdown(tmp_path).splitlines()
    # header, rule, the member, zinc-single (that member), molhiv and
    # molhiv-single without one
    assert len(lines) == 6
    size = f'{path.stat().st_size / 1e6:.2f} MB'
    # What the model predicts is its registry entry's description.
    assert lines[2] == (
        f'| `zinc` | {BUNDLED_MODELS["zinc"].description} | zinc_subset '
        f'| `zinc_seed2.safetensors`, {size} | final '
        f'run, SepNorm, seed 2: 36 epochs, 5,652 steps, 26.7 CPU minutes '
        f'(Test CPU (2 cores)) | MAE 0.3888 (1,000 graphs) | MAE 0.4285 '
        f'(1,000 graphs) | a \\| note |')
    assert lines[3] == (
        f'| `zinc-single` | {BUNDLED_MODELS["zinc-single"].description} '
        f'| zinc_subset | `zinc_seed2.safetensors` of `zinc` (the best '
        f'validation score of its members, row above) | | | | |')
    assert lines[4].startswith(
        f'| `molhiv` | {BUNDLED_MODELS["molhiv"].description} | molhiv '
        f'| none shipped yet')
    assert lines[5].startswith('| `molhiv-single` |')
    assert lines[0].split(' | ')[:3] == ['| name', 'predicts', 'dataset']


def test_an_ensemble_says_its_note_once_and_its_single_is_the_best(
        tmp_path):
    """Three members (validation MAE 0.5, 0.3, 0.4): the note is written on
    the first row only, and zinc-single is seed 1, the lowest MAE."""
    for seed, value in enumerate((0.5, 0.3, 0.4)):
        _member(tmp_path, seed, {'val': {'metric': 'mae', 'value': value,
                                         'num_graphs': 10}})
    lines = bundled_models_markdown(tmp_path).splitlines()
    assert [line.endswith('| a \\| note |') for line in lines[2:5]] == [
        True, False, False]
    assert [line.endswith('| as above |') for line in lines[2:5]] == [
        False, True, True]
    assert '| `zinc_seed1.safetensors` of `zinc` (the best' in lines[5]


def test_a_fine_tuned_member_names_its_backbone(tmp_path):
    _member(tmp_path, 1, {'val': {'metric': 'mae', 'value': 0.3,
                                  'num_graphs': 10}},
            init_from={'source': 'bundled:pretrained-sepnorm',
                       'sha256': 'ab12'})
    assert ('(Test CPU (2 cores)), fine-tuned from the pretrained '
            'bundled:pretrained-sepnorm |') in bundled_models_markdown(
                tmp_path)


def test_a_test_split_not_measured_says_why(tmp_path):
    _member(tmp_path, 0, {
        'val': {'metric': 'mae', 'value': 0.5, 'num_graphs': 10},
        'test': 'not measured: a tuning trial'})
    assert '| not measured: a tuning trial |' in bundled_models_markdown(
        tmp_path)


def test_results_table_refreshes_the_readme_block(tmp_path):
    """scripts/results_table.py --readme rewrites the block from the
    installed cards (whatever runs it tabulates: two toy runs here); the
    committed scripts/README.md already holds that text (so its numbers are
    the cards', not typed)."""
    from tests.analysis.test_results_table import (results_table_script,
                                                   write_run)
    begin, end = readme_markers('bundled-models')
    readme = (REPO / 'scripts' / 'README.md').read_text()
    committed = readme.split(begin, 1)[1].split(end, 1)[0]
    assert committed == '\n' + bundled_models_markdown()
    runs = tmp_path / 'runs'
    for seed in (0, 1):
        write_run(runs, f'r{seed}', 'zinc_subset', 'sep', seed, 0.2, 0.2)
    copy = tmp_path / 'README.md'
    results_begin, results_end = readme_markers('results-table')
    copy.write_text(f'{results_begin}\n{results_end}\n{begin}\nSTALE\n{end}\n')
    assert results_table_script().main([
        '--runs', str(runs), '--output', str(tmp_path / 'RESULTS.md'),
        '--figures', str(tmp_path / 'figs'), '--readme', str(copy)]) == 0
    text = copy.read_text()
    assert 'STALE' not in text
    assert f'{begin}\n{bundled_models_markdown()}{end}' in text
