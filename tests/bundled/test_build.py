"""bundle_runs and scripts/bundle_model.py on tiny run directories: float16
members, what their model cards say, metrics measured again with the
float16 weights, no absolute paths, the size limits."""
import json
from dataclasses import asdict
from pathlib import Path

import pytest
import torch
from safetensors import safe_open

from benchmarks.bundling import cli
from benchmarks.bundling.build import (MAX_BUNDLE_BYTES, MAX_MEMBER_BYTES,
                                       BundleError, bundle_runs)
from graphormer_sepnorm.bundled import (BundledModelNotInstalled,
                                        bundled_model_paths)
from graphormer_sepnorm.checkpoint import load_model

from bundle_helpers import write_run



@pytest.fixture(autouse=True)
def zinc_featurized_registry(monkeypatch):
    """These tests bundle tiny runs of the ZINC dataset (ZINC featurizer):
    the registry's 'zinc' entry accepts them here; the shipped one takes
    runs with OGB features (tests/bundled/test_registry.py)."""
    from dataclasses import replace

    from graphormer_sepnorm.bundled import BUNDLED_MODELS
    monkeypatch.setitem(BUNDLED_MODELS, 'zinc',
                        replace(BUNDLED_MODELS['zinc'], featurizer='zinc'))


PROTOCOL = {'plan': 'benchmarks/plans/final.yaml', 'trial': 'final',
            'overrides': ['optim.lr=5e-4'],
            'config': 'configs/cpu/zinc_subset_sepnorm.yaml',
            'commit': 'abc1234'}


def _mae_with_rounded_weights(run_dir: Path, split, card) -> float:
    """MAE of the run's model with its weights rounded to float16 in
    memory: what the card must report, computed without the bundling
    code."""
    from torch_geometric.loader import DataLoader
    model, _ = load_model(run_dir / 'model.safetensors')
    with torch.no_grad():
        for tensor in model.state_dict().values():
            if tensor.is_floating_point():
                tensor.copy_(tensor.half().float())
        errors = [(model(batch).view(-1).double() * card.target_std
                   + card.target_mean - batch.y.double()).abs()
                  for batch in DataLoader(split, batch_size=200)]
    return torch.cat(errors).mean().item()


def test_bundle_a_tuning_trial_and_a_final_run(tmp_path, zinc_root, capsys):
    from graphormer_sepnorm.data.datasets import load_splits

    root, source = zinc_root
    # A tuning trial, and a final run trained with an absolute raw_source.
    trial = write_run(tmp_path / 'runs' / 'sep_seed0', seed=0)
    final = write_run(tmp_path / 'runs' / 'sep_seed3', seed=3, final=True,
                      raw_source=str(source))
    recorded = json.loads((final / 'results.json').read_text())
    committed = tmp_path / 'committed_results.json'
    # Fine-tuned from a backbone: the card must say so, with the record.
    backbone = {'source': 'bundled:pretrained-sepnorm',
                'file': 'pretrained_sepnorm.safetensors', 'sha256': 'ab12',
                'pretraining': {'steps': 6000, 'graphs_seen': 384000}}
    committed.write_text(json.dumps({**recorded, 'protocol': PROTOCOL,
                                     'init_from': backbone}))
    out = tmp_path / 'bundled'
    out.mkdir()
    (out / 'zinc_seed7.safetensors').write_bytes(b'previous member')
    assert cli.main(['zinc', str(trial), str(final),
                     '--results', str(trial / 'results.json'),
                     '--results', str(committed),
                     '--output-dir', str(out), '--data-root', str(root),
                     '--raw-source', str(source),
                     '--note', 'Interim model.']) == 0
    # The previous member is replaced; nothing else is left behind.
    assert sorted(p.name for p in out.iterdir()) == [
        'zinc_seed0.safetensors', 'zinc_seed3.safetensors']
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith(f"{out / 'zinc_seed0.safetensors'} (0.")
    assert 'test not measured: a tuning trial' in printed[0]
    assert 'val mae' in printed[1] and 'test mae' in printed[1]

    splits = load_splits('zinc_subset', root, raw_source=source)
    for seed, run_dir in ((0, trial), (3, final)):
        member = out / f'zinc_seed{seed}.safetensors'
        assert member.stat().st_mode & 0o777 == 0o644
        with safe_open(str(member), framework='pt') as f:
            assert {f.get_tensor(k).dtype for k in f.keys()
                    if not k.endswith('num_batches_tracked')} == {
                        torch.float16}
        model, card = load_model(member)
        original, _ = load_model(run_dir / 'model.safetensors')
        for name, tensor in model.state_dict().items():
            expected = original.state_dict()[name]
            if expected.is_floating_point():
                expected = expected.half().float()
            assert tensor.dtype == expected.dtype
            assert torch.equal(tensor, expected), name

        extra = card.extra
        assert extra['stored_as'] == 'float16'
        assert extra['note'] == 'Interim model.'
        assert extra['dataset'] == 'zinc_subset'
        assert 'stand-in train split of ZINC-proxy' in extra['training_data']
        assert (extra['seed'], extra['steps'], extra['cpu_time_s']) == (
            seed, 100, 50.0)
        assert extra['hardware']['device_name'] == 'Test CPU'
        assert extra['training_log']['best_val_metric'] == 1.5
        evaluation = extra['evaluation']
        assert evaluation['val']['num_graphs'] == 1000
        assert evaluation['val']['value'] == pytest.approx(
            _mae_with_rounded_weights(run_dir, splits.val, card), abs=1e-6)
        if run_dir == final:
            assert extra['kind'] == 'final run'
            assert extra['protocol'] == PROTOCOL
            assert extra['init_from'] == backbone
            assert evaluation['test']['metric'] == 'mae'
            assert evaluation['test']['value'] == pytest.approx(
                _mae_with_rounded_weights(run_dir, splits.test, card),
                abs=1e-6)
        else:
            assert extra['kind'] == 'tuning trial'
            assert extra['protocol'] is None
            assert extra['init_from'] is None
            assert evaluation['test'].startswith('not measured: a tuning '
                                                 'trial')
        # No path of this machine, though the final run was trained with an
        # absolute data.raw_source (the card keeps its folder name).
        text = json.dumps(asdict(card))
        for path in (tmp_path, root, source, Path.home()):
            assert str(path) not in text
        assert extra['data']['raw_source'] == (
            'ZINC-proxy' if run_dir == final else '../shared/data/ZINC-proxy')


def test_a_member_keeps_its_fitted_molecule_featurizer(tmp_path, zinc_root):
    """A run trained with molecule features (here an 8-bit Morgan count
    fingerprint in the graph token) is bundled with the featurizer of its
    card: the member is evaluated with those features (without them the
    model refuses the batch), and predicts from SMILES what the run's own
    model predicts with the same features, up to float16 weights."""
    from graphormer_sepnorm.checkpoint import save_model
    from graphormer_sepnorm.data.molecule_features import MoleculeFeaturizer
    from graphormer_sepnorm.predict import Predictor

    root, source = zinc_root
    run = write_run(tmp_path / 'runs' / 'sep_seed0', seed=0,
                    graph_feature_channels=8)
    model, card = load_model(run / 'model.safetensors')
    featurizer = MoleculeFeaturizer(['morgan'], morgan_size=8).state_dict()
    card.extra.update(molecule_features=featurizer)
    card.extra['data'].update(molecule_features=['morgan'], morgan_size=8)
    save_model(run / 'model.safetensors', model, card)
    out = tmp_path / 'bundled'
    assert cli.main(['zinc', str(run), '--output-dir', str(out),
                     '--data-root', str(root), '--raw-source',
                     str(source)]) == 0
    member = out / 'zinc_seed0.safetensors'
    _, bundled_card = load_model(member)
    assert bundled_card.extra['molecule_features'] == featurizer
    assert bundled_card.extra['evaluation']['val']['num_graphs'] == 1000
    smiles = ['CCO', 'c1ccccc1O', 'CC(=O)Nc1ccc(O)cc1']
    expected = Predictor.from_checkpoint(run / 'model.safetensors').predict(
        smiles, num_workers=0)
    got = Predictor.from_checkpoint(member).predict(smiles, num_workers=0)
    assert all(p.ok for p in got)
    assert [p.value for p in got] == pytest.approx(
        [p.value for p in expected], abs=1e-2)
    assert len({round(p.value, 4) for p in got}) == 3


def test_size_limits_are_checked_before_evaluating(tmp_path):
    # float16 sizes: hidden 512, 2 layers: 6.96 MB; hidden 400: 4.27 MB.
    big = write_run(tmp_path / 'big', seed=0, hidden_channels=512,
                    num_layers=2)
    out = tmp_path / 'out'
    # A data root that does not exist: the refusal comes before evaluation.
    nowhere = {'output_dir': out, 'data_root': tmp_path / 'no_data',
               'raw_source': tmp_path / 'no_source'}
    with pytest.raises(BundleError, match=r'zinc_seed0.safetensors takes '
                       r'6.9\d MB \(float16\), above the 5 MB limit of a '
                       r'bundled member'):
        bundle_runs('zinc', [big], **nowhere)
    runs = [write_run(tmp_path / f'run{seed}', seed=seed,
                      hidden_channels=400, num_layers=2)
            for seed in range(3)]
    with pytest.raises(BundleError, match=r'The 3 members take 12.8\d MB '
                       r'together \(float16\), above the 10 MB limit of a '
                       r'bundled model; bundle fewer runs'):
        bundle_runs('zinc', runs, **nowhere)
    assert list(out.iterdir()) == []  # Not even the staging folder.
    assert (MAX_MEMBER_BYTES, MAX_BUNDLE_BYTES) == (5_000_000, 10_000_000)


def test_runs_that_do_not_fit_are_refused(tmp_path, capsys):
    run = write_run(tmp_path / 'a', seed=0)
    twin = write_run(tmp_path / 'b', seed=0)
    with pytest.raises(BundleError, match='Several runs have seed 0'):
        bundle_runs('zinc', [run, twin], output_dir=tmp_path / 'out')
    with pytest.raises(BundleError, match="a model of dataset 'zinc_subset' "
                       r"\(featurizer 'zinc', task 'regression'\); the "
                       "bundled 'molhiv' model needs 'molhiv'"):
        bundle_runs('molhiv', [run], output_dir=tmp_path / 'out')
    other = json.loads((run / 'results.json').read_text())
    other.update(seed=1, steps=200)
    (tmp_path / 'other.json').write_text(json.dumps(other))
    with pytest.raises(BundleError, match="does not record the run .*: seed "
                       "1 there, 0 in the run, steps 200 there, 100 in"):
        bundle_runs('zinc', [run], [tmp_path / 'other.json'],
                    output_dir=tmp_path / 'out')
    with pytest.raises(BundleError, match=r'one --results file per run '
                       r'directory, in the same order \(1 for 2 runs\)'):
        bundle_runs('zinc', [run, twin], [tmp_path / 'other.json'])
    with pytest.raises(BundleError, match='absolute paths'):
        bundle_runs('zinc', [run], output_dir=tmp_path / 'out',
                    note=f'trained in {tmp_path}')
    (run / 'results.json').unlink()
    # The command line: one line, exit status 2.
    assert cli.main(['zinc', str(run), '--output-dir',
                     str(tmp_path / 'out')]) == 2
    error = capsys.readouterr().err
    assert error.count('\n') == 1 and 'has no results.json' in error
    with pytest.raises(BundledModelNotInstalled):
        bundled_model_paths('zinc', tmp_path / 'out')
