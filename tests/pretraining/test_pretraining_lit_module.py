"""An objective weighted 0 freezes its head, and every parameter left
trainable gets a gradient from one step (what DDP requires); train.compile
compiles the encoder, checkpoint keys unchanged."""
import pytest
from torch_geometric.data import Batch

from graphormer_sepnorm.pretraining.corpus_dataset import SmilesCorpus
from graphormer_sepnorm.pretraining.descriptors import DescriptorScaler
from graphormer_sepnorm.pretraining.lit_module import PretrainingLitModule
from graphormer_sepnorm.training.config import load_config
from pretraining_helpers import CONFIG, TINY_MODEL, write_corpus


@pytest.fixture(scope='module')
def batch(tmp_path_factory):
    folder = write_corpus(tmp_path_factory.mktemp('corpus'), train=40,
                          val=2)
    corpus = SmilesCorpus(folder / 'train.smi', 'ogb', None)
    corpus.scaler = DescriptorScaler.fit(corpus.descriptor_sample(40))
    return Batch.from_data_list([corpus[i] for i in range(8)])


@pytest.mark.parametrize('weights, frozen', [
    ((1.0, 1.0), set()),
    ((0.0, 1.0), {'atom_head'}),
    ((1.0, 0.0), {'model.head_transform', 'model.head_norm', 'model.head'}),
])
def test_every_trainable_parameter_gets_a_gradient(batch, weights, frozen):
    config = load_config(CONFIG, [
        f'pretrain.atom_loss_weight={weights[0]}',
        f'pretrain.descriptor_loss_weight={weights[1]}', *TINY_MODEL],
        env={}, check_paths=False)
    module = PretrainingLitModule(config)
    module._losses(batch, stream=1, step=0, training=False)['loss'] \
        .backward()
    without = {name for name, p in module.named_parameters()
               if p.requires_grad and p.grad is None}
    assert without == set()
    # The frozen parameters are exactly those of the zero-weighted head.
    frozen_heads = {next((head for head in frozen
                          if name.startswith(head + '.')), name)
                    for name, p in module.named_parameters()
                    if not p.requires_grad}
    assert frozen_heads == frozen


def test_compile_compiles_the_encoder_in_place():
    config = load_config(CONFIG, ['train.compile=true', *TINY_MODEL],
                         env={}, check_paths=False)
    compiled, plain = PretrainingLitModule(config), PretrainingLitModule(
        config)
    compiled.on_fit_start()
    assert hasattr(compiled.model.encode, '_torchdynamo_orig_callable')
    assert not hasattr(plain.model.encode, '_torchdynamo_orig_callable')
    assert list(compiled.state_dict()) == list(plain.state_dict())
