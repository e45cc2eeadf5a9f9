import json
from pathlib import Path

import pytest
import torch
from torch_geometric.data import Batch
from torch_geometric.utils import from_smiles

from graphormer_sepnorm import AddShortestPaths, GraphormerSepNorm
from graphormer_sepnorm.checkpoint import ModelCard, load_model, save_model
from graphormer_sepnorm.data.featurize import featurizer_vocab_sizes
from graphormer_sepnorm.errors import CheckpointError

SMALL = dict(num_layers=1, hidden_channels=8, ffn_channels=8, num_heads=2)
SMILES = ['CC(=O)O', 'c1ccccc1O', '[Na+].[Cl-]', 'O', 'CN(C)C(=O)Cl']


def test_from_smiles_graphs_are_a_named_featurization():
    # The vocabularies of PyG's x_map / e_map: every id of real molecules
    # fits, and the model trains one step on them.
    atoms, bonds = featurizer_vocab_sizes('pyg')
    assert len(atoms) == 9 and len(bonds) == 3
    assert atoms[0] == 119  # atomic numbers 0..118, not OGB's 0-based 119
    graphs = [AddShortestPaths()(from_smiles(s)) for s in SMILES]
    batch = Batch.from_data_list(graphs)
    assert (batch.x < torch.tensor(atoms)).all()
    model = GraphormerSepNorm(**SMALL, atom_vocab_sizes=atoms,
                              bond_vocab_sizes=bonds, featurization='pyg')
    model(batch).sum().backward()
    assert model.config['featurization'] == 'pyg'


def test_checkpoints_refuse_data_of_another_featurization(tmp_path):
    atoms, bonds = featurizer_vocab_sizes('ogb')
    model = GraphormerSepNorm(**SMALL, atom_vocab_sizes=atoms,
                              bond_vocab_sizes=bonds)
    assert model.config['featurization'] == 'custom'
    path = save_model(tmp_path / 'ogb.safetensors', model,
                      ModelCard({}, featurizer='ogb', task='regression'))
    loaded, card = load_model(path, featurization='ogb')
    assert loaded.config['featurization'] == card.model_config[
        'featurization'] == 'ogb'
    assert load_model(path, featurization='custom')[0] is not None
    with pytest.raises(CheckpointError) as error:
        load_model(path, featurization='pyg')
    message = str(error.value)
    assert message.startswith(f"{path} was trained on 'ogb' graphs, OGB's")
    assert "but the data is featurized as 'pyg', PyG's" in message
    with pytest.raises(CheckpointError, match="Unknown featurization "
                       "'smiles'; valid ones: zinc, ogb, pyg, custom"):
        load_model(path, featurization='smiles')
    pyg = GraphormerSepNorm(**SMALL, featurization='pyg')
    with pytest.raises(ValueError, match="featurization is 'pyg' but its "
                       "card's featurizer is 'ogb'"):
        save_model(tmp_path / 'x.safetensors', pyg,
                   ModelCard({}, featurizer='ogb', task='regression'))


def test_old_checkpoints_take_the_featurization_of_their_card(tmp_path):
    # Checkpoints written before the option have no 'featurization' in their
    # model config: a shipped member's file with the key taken out is one.
    import graphormer_sepnorm
    from safetensors import safe_open
    from safetensors.torch import save_file
    from graphormer_sepnorm.checkpoint import read_card
    shipped = (Path(graphormer_sepnorm.__file__).parent / 'bundled' /
               'zinc_seed0.safetensors')
    _, metadata = read_card(shipped)
    card = json.loads(metadata['card'])
    del card['model_config']['featurization']
    with safe_open(str(shipped), framework='pt') as f:
        tensors = {name: f.get_tensor(name) for name in f.keys()}
    path = tmp_path / 'old.safetensors'
    save_file(tensors, str(path),
              metadata={**metadata, 'card': json.dumps(card)})
    assert 'featurization' not in read_card(path)[0].model_config
    model, card = load_model(path)
    assert model.config['featurization'] == card.featurizer == 'ogb'
    with pytest.raises(CheckpointError, match="trained on 'ogb' graphs"):
        load_model(path, featurization='zinc')
