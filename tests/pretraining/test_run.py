"""scripts/pretrain.py end to end on a tiny corpus of real molecules: the
artefacts, exact resume, two gloo processes against one, and the errors of
bad configurations."""
import json

import pytest
from safetensors.torch import load_file

from graphormer_sepnorm.checkpoint import BACKBONE_TASK, read_card
from graphormer_sepnorm.cli.pretrain import pretrain_main
from graphormer_sepnorm.pretraining.descriptors import DESCRIPTOR_NAMES
from conftest import REPO
from pretraining_helpers import (CONFIG, PRETRAIN, pretrain_args,
                                 write_corpus)
from script_helpers import metrics_rows, run_script, without_time


@pytest.fixture(scope='module')
def corpus(tmp_path_factory):
    return write_corpus(tmp_path_factory.mktemp('corpus'))


@pytest.fixture(scope='module')
def straight_run(corpus, tmp_path_factory):
    """A tiny run of 24 steps, uninterrupted."""
    out = tmp_path_factory.mktemp('straight')
    result = run_script(PRETRAIN, *pretrain_args(corpus, out, 'run'))
    assert result.returncode == 0, result.stderr[-3000:]
    return out / 'run'


def _comparable(rows) -> list[dict]:
    # Without the clocks and the throughput.
    return [{k: v for k, v in row.items() if k != 'graphs_per_s'}
            for row in without_time(rows)]


def _backbone_diff(a, b) -> float:
    wa = load_file(str(a / 'backbone.safetensors'))
    wb = load_file(str(b / 'backbone.safetensors'))
    assert wa.keys() == wb.keys()
    return max((wa[k].double() - wb[k].double()).abs().max().item()
               for k in wa)


def test_pretraining_writes_its_artefacts(straight_run):
    run = straight_run
    for name in ('config.yaml', 'metrics.csv', 'curves.png',
                 'backbone.safetensors', 'results.json',
                 'checkpoints/last.ckpt'):
        assert (run / name).is_file(), name
    rows = metrics_rows(run)
    assert [int(r['step']) for r in rows] == [8, 16, 24]
    for row in rows:
        assert 0 <= float(row['val_element_accuracy']) <= 1
        assert float(row['val_graph_token_anisotropy']) <= 1
    # The loss went down on validation (same masked molecules each time).
    assert float(rows[-1]['val_loss']) < float(rows[0]['val_loss'])
    card, _ = read_card(run / 'backbone.safetensors')
    assert card.task == BACKBONE_TASK and card.featurizer == 'ogb'
    assert card.model_config['out_channels'] == len(DESCRIPTOR_NAMES)
    summary = card.extra['pretraining']
    # Epoch 0: 200 molecules in 13 steps (the last of 8), then 11 of 16.
    assert summary['steps'] == 24 and summary['graphs_seen'] == 200 + 11 * 16
    assert summary['objectives']['descriptors']['names'] == list(
        DESCRIPTOR_NAMES)
    results = json.loads((run / 'results.json').read_text())
    assert results['steps'] == 24 and results['cpu_time_s'] > 0


def _tree(run_dir) -> dict:
    """Every file of a run directory and its bytes."""
    return {str(p.relative_to(run_dir)): p.read_bytes()
            for p in sorted(run_dir.rglob('*')) if p.is_file()}


def _refused_resume(run_dir, capsys) -> list[str]:
    """The error lines of a resume of :obj:`run_dir` that must exit 2
    without a traceback."""
    assert pretrain_main(['--resume', str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert 'Traceback' not in err, err
    return [line for line in err.splitlines() if line.startswith('error:')]


def _corpus_changed(file: str) -> str:
    return (f"error: The pretraining corpus changed since the run started "
            f"({file}: another SHA-256 than the checkpoint's); resume with "
            f"the corpus it was started on")


def test_resume_continues_exactly(corpus, straight_run, tmp_path, capsys):
    """Refused resumes (a model, corpus or objective key changed; a corpus
    edited since the start, whose SHA-256 differs) exit 2 with one
    line and leave the run byte for byte as it was; the run then resumes
    exactly (issue 33)."""
    copy = tmp_path / 'corpus'
    copy.mkdir()
    for name in ('train.smi', 'val.smi'):
        (copy / name).write_bytes((corpus / name).read_bytes())
    # 200 molecules in batches of 16: epochs of 13 steps, so the resumed
    # half starts mid-epoch and crosses an epoch boundary.
    first = run_script(PRETRAIN, *pretrain_args(copy, tmp_path, 'b',
                                                'train.max_steps=12'))
    assert first.returncode == 0, first.stderr[-3000:]
    run_dir = tmp_path / 'b'
    before = _tree(run_dir)
    for override, message in (
            ('model.hidden_channels=64', 'model.hidden_channels was 16 when '
             'the run started and is 64 now'),
            (f'pretrain.corpus={corpus}', f'pretrain.corpus was {str(copy)!r}'
             f' when the run started and is {str(corpus)!r} now'),
            ('pretrain.mask_rate=0.5', 'pretrain.mask_rate was 0.15 when the '
             'run started and is 0.5 now')):
        assert pretrain_main(['--resume', str(run_dir), override]) == 2
        err = capsys.readouterr().err
        assert err.startswith('error: --resume') and message in err, err
        assert err.count('\n') == 1
        assert _tree(run_dir) == before
    # The same corpus folder, its molecules reordered since the start.
    train = (copy / 'train.smi').read_text().splitlines()
    (copy / 'train.smi').write_text('\n'.join(train[::-1]) + '\n')
    assert _refused_resume(run_dir, capsys) == [_corpus_changed('train.smi')]
    assert _tree(run_dir) == before
    (copy / 'train.smi').write_text('\n'.join(train) + '\n')
    second = run_script(PRETRAIN, '--resume', str(run_dir),
                        'train.max_steps=24')
    assert second.returncode == 0, second.stderr[-3000:]
    assert _comparable(metrics_rows(straight_run)) == _comparable(
        metrics_rows(tmp_path / 'b'))
    assert _backbone_diff(straight_run, tmp_path / 'b') == 0


def test_worker_processes_featurize_the_same_batches(corpus, straight_run,
                                                    tmp_path):
    result = run_script(PRETRAIN, *pretrain_args(
        corpus, tmp_path, 'workers', 'data.num_workers=2'))
    assert result.returncode == 0, result.stderr[-3000:]
    assert _comparable(metrics_rows(straight_run)) == _comparable(
        metrics_rows(tmp_path / 'workers'))
    assert _backbone_diff(straight_run, tmp_path / 'workers') == 0


def test_resume_with_worker_processes_continues_exactly(corpus, straight_run,
                                                       tmp_path):
    # Stopped mid-epoch and resumed, featurized by 2 workers: the batches
    # and masks of the straight run without workers.
    workers = 'data.num_workers=2'
    first = run_script(PRETRAIN, *pretrain_args(corpus, tmp_path, 'w',
                                                workers, 'train.max_steps=12'))
    assert first.returncode == 0, first.stderr[-3000:]
    second = run_script(PRETRAIN, '--resume', str(tmp_path / 'w'),
                        'train.max_steps=24', workers)
    assert second.returncode == 0, second.stderr[-3000:]
    assert _comparable(metrics_rows(straight_run)) == _comparable(
        metrics_rows(tmp_path / 'w'))
    assert _backbone_diff(straight_run, tmp_path / 'w') == 0


def test_training_from_memory_trains_the_same_model(corpus, straight_run,
                                                    tmp_path):
    """pretrain.in_memory: the 200 molecules featurized before the first
    step by two spawned processes (one chunk each), inside the training
    run, then read from memory by 2 forked DataLoader workers, as on a GPU:
    the straight run's batches and model."""
    result = run_script(PRETRAIN, *pretrain_args(
        corpus, tmp_path, 'memory', 'pretrain.in_memory=true',
        'pretrain.featurize_processes=2', 'data.num_workers=2'))
    assert result.returncode == 0, result.stderr[-3000:]
    assert 'Featurized 200 molecules' in result.stdout, result.stdout
    assert '2 processes' in result.stdout, result.stdout
    assert _comparable(metrics_rows(straight_run)) == _comparable(
        metrics_rows(tmp_path / 'memory'))
    assert _backbone_diff(straight_run, tmp_path / 'memory') == 0


def test_the_gpu_recipes_featurize_in_workers_the_cpu_budget_does_not():
    from graphormer_sepnorm.training.config import load_config
    folder = REPO / 'configs' / 'pretrain'
    for name, workers in (('sepnorm', 8), ('sharenorm', 8),
                          ('cpu_sepnorm', 0), ('cpu_sharenorm', 0)):
        config = load_config(folder / f'{name}.yaml', env={},
                             check_paths=False)
        assert config['data']['num_workers'] == workers, name
        assert config['data']['pin_memory']  # applied on CUDA only


def _one_and_two_processes(corpus, tmp_path, *overrides):
    """Pretrains <tmp_path>/one in one process and <tmp_path>/ddp in two
    gloo processes, in float64 without dropout (so the two can agree)."""
    common = ('train.precision=64-true', 'model.dropout=0',
              'model.attention_dropout=0', 'model.activation_dropout=0',
              'train.accelerator=cpu', *overrides)
    one = run_script(PRETRAIN, *pretrain_args(corpus, tmp_path, 'one',
                                              *common))
    assert one.returncode == 0, one.stderr[-3000:]
    ddp = run_script(PRETRAIN, *pretrain_args(
        corpus, tmp_path, 'ddp', *common, 'train.strategy=ddp',
        'train.devices=2'), timeout=400)
    assert ddp.returncode == 0, ddp.stderr[-3000:]


def test_two_process_ddp_matches_one_process(corpus, tmp_path):
    """gloo, two processes of 8 molecules against one of 16: each molecule
    is masked the same wherever it is, the losses are normalized by global
    counts and SepNorm's batch statistics are global, so in float64 without
    dropout the runs agree (see the supervised twin in
    tests/training/test_train_e2e.py)."""
    _one_and_two_processes(corpus, tmp_path, 'train.max_steps=16',
                           'optim.total_steps=16')
    results = json.loads((tmp_path / 'ddp' / 'results.json').read_text())
    assert results['hardware']['world_size'] == 2
    assert results['graphs_seen'] == 200 + 3 * 16  # 13 + 3 steps
    rows_one, rows_ddp = metrics_rows(tmp_path / 'one'), metrics_rows(
        tmp_path / 'ddp')
    assert len(rows_one) == len(rows_ddp) == 2
    for a, b in zip(rows_one, rows_ddp):
        assert a['step'] == b['step']
        for key in ('train_loss', 'val_loss', 'val_atom_loss',
                    'val_element_accuracy', 'val_descriptor_mse',
                    'val_descriptor_r2', 'val_graph_token_anisotropy'):
            assert float(a[key]) == pytest.approx(float(b[key]), rel=1e-6,
                                                  abs=1e-9), key
    assert _backbone_diff(tmp_path / 'one', tmp_path / 'ddp') < 1e-6


@pytest.mark.parametrize('overrides, message', [
    (['pretrain.atom_loss_weight=0', 'pretrain.descriptor_loss_weight=0'],
     'no objective'),
    (['pretrain.mask_rate=0'], "'pretrain.mask_rate' must be in (0, 1]"),
    (['pretrain.descriptor_loss_weight=-1'],
     "'pretrain.descriptor_loss_weight' must be >= 0"),
    (['pretrain.featurize_processes=2'],
     "'pretrain.featurize_processes' is 2, but it applies only with "
     "'pretrain.in_memory' true"),
    (['pretrain.in_memory=true', 'pretrain.featurize_processes=0'],
     "'pretrain.featurize_processes' must be >= 1, got 0"),
])
def test_bad_pretraining_configs(corpus, tmp_path, overrides, message,
                                capsys):
    # In this process (pretrain.py's main, as the script calls it): an
    # error returns 2 with one line, where an exception would fail here.
    assert pretrain_main(pretrain_args(corpus, tmp_path, 'bad',
                                       *overrides)) == 2
    assert message in capsys.readouterr().err


def test_missing_corpus_names_the_builder(tmp_path, capsys):
    assert pretrain_main(pretrain_args(tmp_path / 'nowhere', tmp_path,
                                       'run')) == 2
    assert 'make_pretraining_corpus.py' in capsys.readouterr().err


def test_each_script_refuses_the_others_config(corpus, tmp_path, capsys):
    from graphormer_sepnorm.cli.train import train_main
    assert train_main(['--config', CONFIG, f'pretrain.corpus={corpus}',
                       f'output_dir={tmp_path}']) == 2
    assert 'scripts/pretrain.py' in capsys.readouterr().err
    assert pretrain_main(['--config', str(REPO / 'configs' /
                                          'zinc_subset_sepnorm.yaml'),
                          f'output_dir={tmp_path}']) == 2
    assert 'scripts/train.py' in capsys.readouterr().err


def test_the_card_keeps_the_corpus_counts_and_no_paths():
    from graphormer_sepnorm.pretraining.backbone import corpus_summary
    manifest = {
        'corpus': 'moses', 'rdkit_version': '2026.09.1',
        'source': {'wheel': 'molsets.whl', 'sha256': 'ab', 'license': 'MIT',
                   'files': {}},
        'counts': {'read': 10, 'removed': 2, 'train': 7, 'val': 1},
        'exclusions': {'removed_by_rule': {'canonical_smiles': 2},
                       'skipped': [],
                       'splits': [{'source': 'molhiv', 'split': 'test',
                                   'path': '/home/someone/data',
                                   'molecules': 5, 'matched_total': 2}]}}
    summary = corpus_summary(manifest)
    assert summary['counts'] == manifest['counts']
    assert summary['removed_from'] == [{'source': 'molhiv', 'split': 'test',
                                        'molecules': 5, 'matched_total': 2}]
    assert '/home/someone' not in json.dumps(summary)


def test_ddp_with_a_zero_weighted_objective(corpus, tmp_path):
    """The descriptor objective off: the model's prediction head gets no
    gradient, which DDP refuses unless that head is left out of training;
    two gloo processes then match one process."""
    _one_and_two_processes(corpus, tmp_path, 'train.max_steps=8',
                           'optim.total_steps=8',
                           'pretrain.descriptor_loss_weight=0')
    [a], [b] = metrics_rows(tmp_path / 'one'), metrics_rows(tmp_path / 'ddp')
    for key in ('train_loss', 'val_loss', 'val_atom_loss'):
        assert float(a[key]) == pytest.approx(float(b[key]), rel=1e-6), key
    assert _backbone_diff(tmp_path / 'one', tmp_path / 'ddp') < 1e-6


def _gzip(text: bytes) -> bytes:
    import gzip
    return gzip.compress(text)


@pytest.mark.parametrize('name, make, message', [
    ('train.smi', lambda good: b'xx(\nC1CC\n' * 20,
     'train.smi: none of its first 40 lines is a SMILES that RDKit parses'),
    ('val.smi', lambda good: b'xx(\nC1CC\n' * 20,
     'val.smi: none of its first 32 lines is a SMILES that RDKit parses'),
    ('val.smi', lambda good: b'', 'val.smi holds no molecule (it is empty)'),
    ('train.smi', lambda good: b'\n\n', 'train.smi holds no molecule'),
    ('train.smi', _gzip, 'train.smi holds gzip-compressed bytes, not SMILES '
     'text'),
    ('train.smi', lambda good: good.replace(b'\n', b'\n\xe9', 3).replace(
        b'\n\xe9', b'\n', 2), 'train.smi line 4 is not UTF-8 text (byte '
     '0xe9)'),
    ('train.smi', None, 'train.smi is a folder, not a SMILES file'),
])
def test_a_bad_corpus_is_refused_before_training(corpus, tmp_path, name,
                                                 make, message, capsys):
    """Each corpus file is checked before the first step: one line, exit 2,
    no checkpoint (issue 33)."""
    bad = tmp_path / 'corpus'
    bad.mkdir()
    for file in ('train.smi', 'val.smi'):
        (bad / file).write_bytes((corpus / file).read_bytes())
    if make is None:
        (bad / name).unlink()
        (bad / name).mkdir()
    else:
        (bad / name).write_bytes(make((corpus / name).read_bytes()))
    assert pretrain_main(pretrain_args(
        bad, tmp_path, 'run', 'pretrain.scaler_molecules=40')) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith('error:')]
    assert len(errors) == 1 and 'Traceback' not in err, err
    assert message in errors[0] and 'make_pretraining_corpus.py' in errors[0]
    assert not (tmp_path / 'run' / 'checkpoints').exists()


def test_a_changed_corpus_is_refused_without_the_descriptor_objective(
        corpus, tmp_path, capsys):
    """With descriptor weight 0 no scaler is fitted, so the corpus files'
    SHA-256, kept in the checkpoint, is what tells a resumed run that its
    corpus changed: one line, exit 2, the run left as it was; the same
    corpus resumes."""
    copy = tmp_path / 'corpus'
    copy.mkdir()
    for name in ('train.smi', 'val.smi'):
        (copy / name).write_bytes((corpus / name).read_bytes())
    first = run_script(PRETRAIN, *pretrain_args(
        copy, tmp_path, 'm', 'train.max_steps=8',
        'pretrain.descriptor_loss_weight=0'))
    assert first.returncode == 0, first.stderr[-3000:]
    # Its progress lines name only the objective it trains.
    progress = [line for line in first.stdout.splitlines()
                if line.startswith('step ')]
    assert progress and all('element accuracy' in line and 'R2' not in line
                            for line in progress), first.stdout
    run_dir = tmp_path / 'm'
    before = _tree(run_dir)
    val = (copy / 'val.smi').read_text().splitlines()
    (copy / 'val.smi').write_text('\n'.join(val[::-1]) + '\n')
    assert _refused_resume(run_dir, capsys) == [_corpus_changed('val.smi')]
    assert _tree(run_dir) == before
    (copy / 'val.smi').write_text('\n'.join(val) + '\n')
    assert pretrain_main(['--resume', str(run_dir), 'train.max_steps=12']) == 0
