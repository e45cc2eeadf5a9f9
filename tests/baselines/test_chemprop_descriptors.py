"""chemprop's molecule featurizers as extra descriptors of the baseline
(``--molecule-featurizers``, as ``chemprop train`` adds them): they reach
the model's head, are standardized with the training split's statistics
only, a bad name is a clear error, and a run records them."""
import json

import numpy as np
import pytest

pytest.importorskip('chemprop', reason='the chemprop baseline needs the '
                    '[baselines] extra (pip install ".[baselines]")')

import torch  # noqa: E402
import yaml  # noqa: E402
from baseline_data import small_zinc  # noqa: E402
from chemprop.data import build_dataloader  # noqa: E402
from chemprop.featurizers.molecule import (  # noqa: E402
                                           MoleculeFeaturizerRegistry)
from rdkit import Chem  # noqa: E402
from rdkit.Chem import Descriptors  # noqa: E402

from benchmarks.baselines.chemprop_descriptors import (  # noqa: E402
                                                       scale_descriptors)
from benchmarks.baselines.chemprop_model import (  # noqa: E402
    build_chemprop_model, chemprop_datasets)
from benchmarks.chemprop_baseline import main  # noqa: E402
from graphormer_sepnorm.data.molecule_splits import (  # noqa: E402
                                                     MoleculeSplit)

SMILES = {'train': ['CCO', 'c1ccccc1O', 'CC(=O)[O-]', 'CCN(CC)CC', 'C1CCNCC1',
                    'O=C(O)c1ccccc1'],
          'val': ['CCCl', 'c1ccncc1', 'CC[NH3+]'],
          'test': ['OCC(O)CO', 'Cc1ccccc1', 'CS(C)=O']}
NAMES = ['rdkit_2d', 'charge']


def _splits():
    return {split: MoleculeSplit(smiles, np.arange(len(smiles), dtype=float),
                                 np.arange(len(smiles)))
            for split, smiles in SMILES.items()}


def _by_hand(smiles):
    # chemprop's own featurizers applied to each molecule, concatenated.
    featurizers = [MoleculeFeaturizerRegistry[name]() for name in NAMES]
    return np.array([np.concatenate([f(Chem.MolFromSmiles(s))
                                     for f in featurizers]) for s in smiles],
                    dtype=float)


def _batch_X_d(dataset):
    loader = build_dataloader(dataset, batch_size=64, num_workers=0,
                              shuffle=False)
    (batch,) = list(loader)
    return batch[2].double().numpy()


def test_descriptors_reach_the_head_scaled_on_the_training_split_only():
    featurizer, datasets = chemprop_datasets(_splits(), NAMES)
    raw = {split: _by_hand(smiles) for split, smiles in SMILES.items()}
    # rdkit_2d: one column per RDKit descriptor; charge: one column.
    columns = len(Descriptors.descList) + 1
    assert raw['test'].shape == (3, columns)
    assert raw['train'][2, -1] == -1 and raw['val'][2, -1] == 1  # charge
    transform = scale_descriptors(datasets)
    # Statistics of the six training molecules alone (numpy, population
    # std; a constant column is left unscaled, as scikit-learn does).
    mean, std = raw['train'].mean(axis=0), raw['train'].std(axis=0)
    std = np.where(std == 0, 1.0, std)
    np.testing.assert_allclose(transform.mean.double().numpy()[0], mean,
                               rtol=1e-6)
    np.testing.assert_allclose(transform.scale.double().numpy()[0], std,
                               rtol=1e-6)
    assert not np.allclose(mean, raw['val'].mean(axis=0))
    # Training and validation batches carry the scaled descriptors (the
    # model's transform is off in training and chemprop's validation);
    # test batches the raw ones, which the model scales when predicting.
    for split in ('train', 'val'):
        np.testing.assert_allclose(_batch_X_d(datasets[split]),
                                   (raw[split] - mean) / std, rtol=1e-5,
                                   atol=1e-5)
    np.testing.assert_allclose(_batch_X_d(datasets['test']), raw['test'],
                               rtol=1e-6)
    model = build_chemprop_model('zinc_subset', featurizer, None,
                                 n_descriptors=datasets['train'].d_xd,
                                 descriptor_transform=transform)
    first = next(m for m in model.predictor.modules()
                 if isinstance(m, torch.nn.Linear))
    assert datasets['train'].d_xd == columns
    assert first.in_features == model.message_passing.output_dim + columns
    model.eval()
    bmg, V_d, X_d, *_ = next(iter(build_dataloader(
        datasets['test'], 64, num_workers=0, shuffle=False)))
    with torch.inference_mode():
        fingerprint = model.fingerprint(bmg, V_d, X_d)
    np.testing.assert_allclose(fingerprint[:, -columns:].double().numpy(),
                               (raw['test'] - mean) / std, rtol=1e-4,
                               atol=1e-4)


def test_without_featurizers_nothing_changes():
    featurizer, datasets = chemprop_datasets(_splits())
    assert datasets['train'].d_xd == 0
    assert scale_descriptors(datasets) is None
    model = build_chemprop_model('molhiv', featurizer, None)
    first = next(m for m in model.predictor.modules()
                 if isinstance(m, torch.nn.Linear))
    assert first.in_features == model.message_passing.output_dim


def test_descriptors_beyond_float32_are_a_clear_error():
    # RDKit's Ipc reaches ~1e84 and MaxPartialCharge inf on large MolHIV
    # molecules: float32 batches would make them inf and predictions NaN.
    from chemprop.data import MoleculeDatapoint, MoleculeDataset
    from chemprop.featurizers import SimpleMoleculeMolGraphFeaturizer

    from benchmarks.baselines.chemprop_descriptors import check_float32_range

    def dataset(rows):
        return MoleculeDataset(
            [MoleculeDatapoint.from_smi('CCO', y=np.zeros(1),
                                        x_d=np.array(row, dtype=float))
             for row in rows], SimpleMoleculeMolGraphFeaturizer())
    fine = dataset([[1e30, 0.0], [-3e38, 1.0]])
    check_float32_range({'train': fine})
    for bad in ([[1.0, np.inf]], [[1e84, 0.0], [1e39, 0.0]]):
        datasets = {'train': fine, 'test': dataset(bad)}
        with pytest.raises(ValueError, match=(
                f"{len(bad)} test molecules have descriptors that are "
                f"infinite or beyond float32's range \\(columns "
                f"{int(bad[0][0] == 1.0)} of 2\\).*v1_rdkit_2d_normalized")):
            scale_descriptors(datasets)
        assert datasets['train'].X_d[0, 0] == 1e30  # not scaled


@pytest.mark.parametrize('names,message', [
    (['rdkit_3d'], "unknown molecule featurizer 'rdkit_3d'; choose from "
     "charge, morgan_binary, morgan_count, rdkit_2d"),
    (['charge', 'charge'], 'named twice')])
def test_a_bad_featurizer_is_a_one_line_error(tmp_path, capsys, names,
                                              message):
    code = main(['--dataset', 'zinc_subset', '--source', str(tmp_path),
                 '--output-dir', str(tmp_path / 'runs'),
                 '--molecule-featurizers', *names])
    error = capsys.readouterr().err
    assert code == 2 and message in error
    assert error.count('\n') == 1 and not (tmp_path / 'runs').exists()


def test_a_run_with_rdkit_2d_finishes_and_records_them(tmp_path, capsys):
    small_zinc(tmp_path / 'data', sizes=(16, 8, 8))
    code = main(['--dataset', 'zinc_subset', '--source',
                 str(tmp_path / 'data'), '--output-dir',
                 str(tmp_path / 'runs'), '--max-epochs', '3',
                 '--batch-size', '8', '--no-progress-bar',
                 '--molecule-featurizers', 'rdkit_2d'])
    assert code == 0, capsys.readouterr().err
    run_dir = tmp_path / 'runs' / 'zinc_subset_chemprop_rdkit_2d_seed0'
    results = json.loads((run_dir / 'results.json').read_text())
    config = yaml.safe_load((run_dir / 'config.yaml').read_text())
    assert results['molecule_featurizers'] == ['rdkit_2d']
    assert config['molecule_featurizers'] == ['rdkit_2d']
    assert results['descriptor_columns'] == len(Descriptors.descList)
    assert results['epochs_completed'] == 3
    # The validation MAE logged in training (pre-scaled descriptors) is
    # the one recomputed from the selected model's predictions (raw
    # descriptors, scaled by the model): both see the same inputs.
    with open(run_dir / 'metrics.csv') as f:
        logged = [float(line.split(',')[header.index('val_mae')])
                  for header in [f.readline().strip().split(',')]
                  for line in f]
    assert min(logged) == pytest.approx(results['best_val_metric'],
                                        rel=1e-5)
