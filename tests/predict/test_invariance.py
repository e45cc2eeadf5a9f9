"""Same molecule, same answer: 1,000 real ZINC molecules, each written 5
ways (its own SMILES and 4 random ones), through both bundled models and a
model trained on a CSV, and the same molecules as SDF records with their
atoms shuffled. Every spread is at most 1e-5."""
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from rdkit import Chem
from torch_geometric.data import Batch

from conftest import REPO, shared_path
from graphormer_sepnorm.bundled import bundled_model_paths
from graphormer_sepnorm.checkpoint import load_model
from graphormer_sepnorm.data.csv_dataset import CSVDataWarning
from graphormer_sepnorm.data.featurize import get_featurizer
from graphormer_sepnorm.predict import Predictor
from graphormer_sepnorm.cli.train import train_main
from graphormer_sepnorm.transforms import AddShortestPaths

from predict_helpers import one_thread  # noqa: F401 (autouse fixture)

SPELLINGS = 5
TOLERANCE = 1e-5


@pytest.fixture(scope='module')
def molecules() -> list[str]:
    path = shared_path('zinc250k', 'jtvae_test.txt')
    return [line.split()[0] for line in path.read_text().splitlines()][:1000]


@pytest.fixture(scope='module')
def written(molecules) -> list[list[str]]:
    """Each molecule as given, then 4 random SMILES of it (seeded)."""
    return [[s, *Chem.MolToRandomSmilesVect(Chem.MolFromSmiles(s),
                                            SPELLINGS - 1, randomSeed=k)]
            for k, s in enumerate(molecules)]


def spreads(predictor: Predictor, written) -> np.ndarray:
    """Per molecule, the largest minus the smallest prediction over its
    spellings (every output column)."""
    flat = [s for texts in written for s in texts]
    predictions = predictor.predict(flat, num_workers=0)
    assert all(p.ok for p in predictions), [p.error for p in predictions
                                            if not p.ok][:3]
    values = np.array([np.atleast_1d(np.asarray(
        list(p.value.values()) if isinstance(p.value, dict) else p.value,
        dtype=float)) for p in predictions])
    values = values.reshape(len(written), SPELLINGS, -1)
    return (values.max(1) - values.min(1)).max(1)


# One member of each bundled ensemble: an ensemble averages members, so it
# is as invariant as they are (and takes four times as long).
@pytest.mark.parametrize('name', ['zinc-single', 'molhiv-single'])
def test_bundled_models_give_one_answer_per_molecule(name, written):
    spread = spreads(Predictor.from_bundled(name), written)
    assert len(spread) == 1000
    assert spread.max() <= TOLERANCE, (spread.max(), spread.argmax())


def test_as_written_the_bundled_zinc_model_depended_on_the_spelling(
        written):
    """The probe above is sensitive: the same model on the same spellings
    featurized in their written atom order (the graphs before this fix)
    spreads by far more than the tolerance."""
    model, card = load_model(bundled_model_paths('zinc')[0])
    model.eval()
    featurize, paths = get_featurizer(card.featurizer), AddShortestPaths()
    outputs = []
    with torch.no_grad():
        for k in range(SPELLINGS):
            batch = Batch.from_data_list([
                paths(featurize(texts[k], canonical=False))
                for texts in written[:200]])
            outputs.append(model(batch).view(-1) * card.target_std)
    outputs = torch.stack(outputs)
    spread = outputs.max(0).values - outputs.min(0).values
    assert spread.max() > 1000 * TOLERANCE
    assert (spread > TOLERANCE).float().mean() > 0.5


@pytest.fixture(scope='module')
def csv_trained_model(zinc_property_frame, tmp_path_factory) -> Predictor:
    """A small model trained on a CSV (ZINC featurizer: Kekulé bonds), with
    multi-hop edges: the path the CSV training of configs/README.md takes."""
    tmp_path = tmp_path_factory.mktemp('csv_invariance')
    frame = zinc_property_frame.copy()
    # Training molecules written at random: the model must learn from one
    # graph per molecule whatever the spelling.
    frame['smiles'] = [Chem.MolToRandomSmilesVect(Chem.MolFromSmiles(s), 1,
                                                  randomSeed=k)[0]
                       for k, s in enumerate(frame['smiles'])]
    path = tmp_path / 'molecules.csv'
    frame.to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', CSVDataWarning)
        status = train_main([
            '--config', str(REPO / 'configs' / 'csv_zinc_properties.yaml'),
            f'data.path={path}', f'data.root={tmp_path / "data"}',
            f'output_dir={tmp_path}', 'run_name=run', 'data.featurizer=zinc',
            'data.target_columns=[y,logp]', 'train.max_epochs=2',
            'data.batch_size=32', 'optim.lr=1e-3', 'train.progress_bar=false',
            'model.num_layers=2', 'model.hidden_channels=32',
            'model.ffn_channels=32', 'model.num_heads=4'])
    assert status == 0
    return Predictor.from_checkpoint(tmp_path / 'run')


def test_a_csv_trained_model_gives_one_answer_per_molecule(
        csv_trained_model, written):
    assert csv_trained_model.num_outputs == 2
    spread = spreads(csv_trained_model, written)
    assert spread.max() <= TOLERANCE, (spread.max(), spread.argmax())


def _shuffled_record(smiles: str, seed: int, hydrogens: bool) -> str:
    """A mol block of the molecule with its atoms in a random order, with
    explicit hydrogen atoms if asked."""
    mol = Chem.MolFromSmiles(smiles)
    if hydrogens:
        mol = Chem.AddHs(mol)
    order = np.random.default_rng(seed).permutation(mol.GetNumAtoms())
    mol = Chem.RenumberAtoms(mol, order.tolist())
    mol.SetProp('_Name', f'mol{seed}')
    return Chem.MolToMolBlock(mol) + '$$$$\n'


def test_sdf_with_shuffled_atoms_gives_the_smiles_answer(molecules,
                                                         tmp_path):
    predictor = Predictor.from_bundled('zinc')
    smiles = molecules[:300]
    sdf = tmp_path / 'molecules.sdf'
    sdf.write_text(''.join(_shuffled_record(s, k, hydrogens=k % 2 == 1)
                           for k, s in enumerate(smiles)))
    predictor.predict_file(sdf, tmp_path / 'out.csv', num_workers=0)
    from_sdf = pd.read_csv(tmp_path / 'out.csv')
    assert from_sdf['name'].tolist() == [f'mol{k}' for k in range(300)]
    assert from_sdf['error'].isna().all()
    from_smiles = np.array([p.value for p in predictor.predict(
        smiles, num_workers=0)])
    assert np.abs(from_sdf['prediction'].to_numpy() - from_smiles).max() \
        <= TOLERANCE
