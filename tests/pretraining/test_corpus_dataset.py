"""SmilesCorpus items against the package's own graph path (featurizer +
AddShortestPaths) and RDKit's descriptors."""
import numpy as np
import pytest
import torch
from rdkit import Chem

from graphormer_sepnorm.data.featurize import smiles_to_ogb_graph
from graphormer_sepnorm.pretraining.corpus_dataset import SmilesCorpus
from graphormer_sepnorm.pretraining.descriptors import (DescriptorScaler,
                                                        descriptor_values)
from graphormer_sepnorm.transforms import AddShortestPaths


def test_items_are_the_training_graphs_with_standardized_descriptors(
        tmp_path):
    smiles = ['CCO', 'c1ccccc1O', 'CC(=O)Nc1ccc(O)cc1']
    path = tmp_path / 'train.smi'
    path.write_text('\n'.join(smiles) + '\n\n')  # an empty line is skipped
    corpus = SmilesCorpus(path, 'ogb', None, max_nodes=64)
    assert len(corpus) == 3 and corpus.smiles(2) == smiles[2]
    raw = corpus.descriptor_sample(3)
    corpus.scaler = scaler = DescriptorScaler.fit(raw)
    for index, s in enumerate(smiles):
        item = corpus[index]
        expected = AddShortestPaths(max_nodes=64)(smiles_to_ogb_graph(s))
        for key in ('x', 'edge_index', 'edge_attr', 'spd', 'path_next'):
            assert item[key].dtype == expected[key].dtype, key
            assert torch.equal(item[key], expected[key]), key
        np.testing.assert_allclose(
            item.y.numpy()[0],
            scaler.transform(descriptor_values(Chem.MolFromSmiles(s))))


def test_an_unreadable_line_is_replaced_by_the_next_molecule(tmp_path):
    path = tmp_path / 'train.smi'
    path.write_text('CCO\nnot_a_smiles\nCCN\n')
    corpus = SmilesCorpus(path, 'ogb', None, max_nodes=64)
    corpus.scaler = DescriptorScaler.fit(corpus.descriptor_sample(3))
    with pytest.warns(RuntimeWarning, match='line 2'):
        item = corpus[1]
    assert item.num_nodes == 3  # CCN


def test_batches_keep_each_molecules_line(tmp_path):
    from torch_geometric.data import Batch
    path = tmp_path / 'train.smi'
    path.write_text('CCO\nc1ccccc1O\nCCN\n')
    corpus = SmilesCorpus(path, 'ogb', None, max_nodes=64)
    corpus.scaler = DescriptorScaler.fit(corpus.descriptor_sample(3))
    batch = Batch.from_data_list([corpus[2], corpus[0], corpus[1]])
    # Not offset by the node counts, as PyG does for *_index attributes.
    assert batch.corpus_line.tolist() == [2, 0, 1]


def test_without_a_scaler_items_have_no_descriptors(tmp_path):
    path = tmp_path / 'train.smi'
    path.write_text('CCO\nc1ccccc1O\n')
    item = SmilesCorpus(path, 'ogb', None, max_nodes=64)[1]
    assert 'y' not in item and item.num_nodes == 7


def test_a_zero_descriptor_weight_computes_no_descriptor(tmp_path,
                                                         monkeypatch):
    """Masked-atom pretraining alone: the data module fits no scaler and
    its graphs come without descriptors, so RDKit's descriptor code never
    runs (it would raise here); the descriptor weight 1 still fits one."""
    from graphormer_sepnorm.pretraining import corpus_dataset, descriptors
    from graphormer_sepnorm.pretraining.datamodule import CorpusDataModule
    from graphormer_sepnorm.training.config import load_config
    from pretraining_helpers import CONFIG, write_corpus
    corpus = write_corpus(tmp_path / 'corpus', train=40, val=8)

    def setup(weight: float) -> CorpusDataModule:
        config = load_config(CONFIG, [
            f'pretrain.corpus={corpus}', 'data.batch_size=8',
            'pretrain.scaler_molecules=20',
            f'pretrain.descriptor_loss_weight={weight}'])
        module = CorpusDataModule(config)
        module.setup()
        return module

    def refuse(mol):
        raise AssertionError('descriptors computed')
    monkeypatch.setattr(corpus_dataset, 'descriptor_values', refuse)
    monkeypatch.setattr(descriptors, 'descriptor_values', refuse)
    module = setup(0.0)
    assert module.scaler is None
    assert 'y' not in module.train_set[0] and 'y' not in module.val_set[0]
    monkeypatch.undo()
    module = setup(1.0)
    assert module.scaler is not None
    assert module.train_set[0].y.shape == (1, len(module.scaler.mean))
