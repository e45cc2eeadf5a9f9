"""FeaturizedCorpus (pretrain.in_memory) against the on-the-fly SmilesCorpus:
the same items, in one process and in spawned workers, with and without
descriptors, the same replacement of a line that cannot be featurized, and
the same batches from the data module."""
import warnings

import pytest
import torch

from graphormer_sepnorm.data.featurize import FeaturizationError
from graphormer_sepnorm.pretraining.corpus_dataset import SmilesCorpus
from graphormer_sepnorm.pretraining.descriptors import DescriptorScaler
from graphormer_sepnorm.pretraining.featurized_corpus import FeaturizedCorpus
from pretraining_helpers import CONFIG, write_corpus


def _on_the_fly(corpus: SmilesCorpus, index: int):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)
        return corpus[index]


def assert_same_items(expected: SmilesCorpus, actual: FeaturizedCorpus):
    assert len(actual) == len(expected)
    for index in range(len(expected)):
        a, b = _on_the_fly(expected, index), actual[index]
        assert sorted(a.keys()) == sorted(b.keys()), index
        assert a.num_nodes == b.num_nodes, index
        for key in a.keys():
            if key == 'num_nodes':
                continue
            assert b[key].dtype == a[key].dtype, (index, key)
            assert b[key].shape == a[key].shape, (index, key)
            assert torch.equal(b[key], a[key]), (index, key)


@pytest.fixture(scope='module')
def corpus_file(tmp_path_factory):
    return write_corpus(tmp_path_factory.mktemp('corpus'), train=60,
                        val=1) / 'train.smi'


@pytest.mark.parametrize('processes', [1, 2])
@pytest.mark.parametrize('scaled', [True, False],
                         ids=['descriptors', 'no descriptors'])
def test_items_are_the_on_the_fly_items(corpus_file, processes, scaled):
    # Two processes: the 60 lines in two chunks, one per spawned worker.
    source = SmilesCorpus(corpus_file, 'ogb', None, max_nodes=64)
    if scaled:
        source.scaler = DescriptorScaler.fit(source.descriptor_sample(60))
    corpus = FeaturizedCorpus(source, processes, progress=False)
    assert_same_items(source, corpus)
    assert ('y' in corpus[0]) == scaled
    assert corpus.sha256() == source.sha256()
    assert corpus.smiles(7) == source.smiles(7)


def test_a_line_that_cannot_be_featurized_is_replaced_as_on_the_fly(
        tmp_path):
    """Line 2 takes line 3's molecule; line 4, the last, the first one's
    (in the other worker's chunk); each bad line is named once."""
    path = tmp_path / 'train.smi'
    path.write_text('CCO\nnot_a_smiles\nCCN\nxx(\n')
    source = SmilesCorpus(path, 'ogb', None, max_nodes=64)
    source.scaler = DescriptorScaler.fit(source.descriptor_sample(4))
    with pytest.warns(RuntimeWarning) as record:
        corpus = FeaturizedCorpus(source, 2, progress=False)
    messages = [str(warning.message) for warning in record]
    assert len(messages) == 2, messages
    assert messages[0].startswith(f'{path} line 2: ')
    assert messages[1].startswith(f'{path} line 4: ')
    assert all(m.endswith('the next molecule is used instead')
               for m in messages)
    assert_same_items(source, corpus)
    assert corpus[1].corpus_line.tolist() == [2]
    assert corpus[3].corpus_line.tolist() == [0]
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # no warning once built
        corpus[1]


def test_no_featurizable_line_is_the_on_the_fly_error(tmp_path):
    path = tmp_path / 'train.smi'
    path.write_text('xx(\nnot_a_smiles\n')
    source = SmilesCorpus(path, 'ogb', None, max_nodes=64)
    with pytest.warns(RuntimeWarning), pytest.raises(
            FeaturizationError, match=f'no molecule of {path} can be '
            f'featurized'):
        FeaturizedCorpus(source, 1, progress=False)
    with pytest.raises(ValueError, match='processes must be at least 1'):
        FeaturizedCorpus(source, 0, progress=False)


def test_memory_is_about_the_graphs_arrays(corpus_file):
    source = SmilesCorpus(corpus_file, 'ogb', None, max_nodes=64)
    corpus = FeaturizedCorpus(source, 1, progress=False)
    items = [source[i] for i in range(len(source))]
    tensors = [item[key] for item in items for key in item.keys()
               if key != 'num_nodes']
    # At least a byte per value (integers are held narrowed), at most their
    # own bytes plus 8-byte offsets (one per item and attribute, and the
    # row of each line).
    values = sum(t.numel() for t in tensors)
    assert 0 < values <= corpus.nbytes <= sum(
        t.numel() * t.element_size() for t in tensors) + 8 * (
            len(tensors) + 2 * len(items) + 8)


def test_the_data_module_trains_from_memory_on_the_same_batches(tmp_path):
    from graphormer_sepnorm.pretraining.datamodule import CorpusDataModule
    from graphormer_sepnorm.training.config import load_config
    corpus = write_corpus(tmp_path / 'corpus', train=40, val=8)

    def first_batches(*overrides: str) -> tuple[CorpusDataModule, list]:
        module = CorpusDataModule(load_config(CONFIG, [
            f'pretrain.corpus={corpus}', 'data.batch_size=16',
            'data.num_workers=0', 'pretrain.scaler_molecules=20',
            *overrides]))
        module.setup()
        loader = module.train_dataloader()
        return module, [batch for _, batch in zip(range(3), loader)]

    module, in_memory = first_batches('pretrain.in_memory=true',
                                      'pretrain.featurize_processes=1')
    assert isinstance(module.train_dataset, FeaturizedCorpus)
    assert isinstance(module.val_set, SmilesCorpus)  # on the fly
    _, on_the_fly = first_batches()
    assert len(in_memory) == len(on_the_fly) == 3
    for a, b in zip(in_memory, on_the_fly):
        assert sorted(a.keys()) == sorted(b.keys())
        for key in a.keys():
            if isinstance(a[key], torch.Tensor):
                assert a[key].dtype == b[key].dtype, key
                assert torch.equal(a[key], b[key]), key


def test_the_default_processes_share_the_cores_among_the_devices(
        monkeypatch):
    from graphormer_sepnorm.pretraining import datamodule
    from graphormer_sepnorm.training.config import load_config
    config = load_config(CONFIG, ['pretrain.in_memory=true'], env={},
                         check_paths=False)
    module = datamodule.CorpusDataModule(config)
    monkeypatch.setattr(datamodule, 'available_cores', lambda: 16)
    assert module._featurize_processes() == 16  # no trainer: one device
    monkeypatch.setattr(datamodule, '_processes_per_node', lambda _: 4)
    assert module._featurize_processes() == 4
    monkeypatch.setattr(datamodule, '_processes_per_node', lambda _: 32)
    assert module._featurize_processes() == 1
    config['pretrain']['featurize_processes'] = 3
    assert module._featurize_processes() == 3
