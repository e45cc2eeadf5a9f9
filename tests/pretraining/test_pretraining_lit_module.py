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


@pytest.mark.parametrize('scope', ['regions', 'model'])
def test_compile_compiles_the_encoder_in_place(scope):
    config = load_config(CONFIG, ['train.compile=true',
                                  f'train.compile_scope={scope}',
                                  *TINY_MODEL],
                         env={}, check_paths=False)
    compiled, plain = PretrainingLitModule(config), PretrainingLitModule(
        config)
    compiled.on_fit_start()
    whole = hasattr(compiled.model.encode, '_torchdynamo_orig_callable')
    layers = all(layer._compiled_call_impl is not None
                 for layer in compiled.model.layers)
    assert (whole, layers) == ((True, False) if scope == 'model' else
                               (False, True))
    assert not hasattr(plain.model.encode, '_torchdynamo_orig_callable')
    assert list(compiled.state_dict()) == list(plain.state_dict())


def _scaler(mean: float) -> DescriptorScaler:
    return DescriptorScaler([mean, 1.0], [1.0, 2.0], clip=6.0)


def test_resume_checks_the_corpus_digests_then_old_checkpoints_scaler():
    """The corpus files' SHA-256 decides; a checkpoint written before the
    digests were kept is checked by its descriptor scaler instead."""
    from graphormer_sepnorm.data.errors import DataError

    config = load_config(CONFIG, TINY_MODEL, env={}, check_paths=False)
    module = PretrainingLitModule(config)
    module.scaler = _scaler(0.0)
    module.corpus_sha256 = {'train': 'a', 'val': 'b'}
    same = {'descriptor_scaler': _scaler(0.0).state_dict(),
            'corpus_sha256': {'train': 'a', 'val': 'b'}}
    module.load_extra_state(same)
    with pytest.raises(DataError, match=r'\(val\.smi: another SHA-256'):
        module.load_extra_state({**same, 'corpus_sha256': {'train': 'a',
                                                           'val': 'c'}})
    # Same digests: the saved scaler is the run's, whatever was fitted now.
    module.load_extra_state({**same, 'descriptor_scaler':
                             _scaler(0.5).state_dict()})
    assert module.scaler.state_dict() == _scaler(0.5).state_dict()
    module.scaler = _scaler(0.0)
    with pytest.raises(DataError, match='descriptor scaler differs'):
        module.load_extra_state({'descriptor_scaler':
                                 _scaler(0.5).state_dict()})
    module.load_extra_state({'descriptor_scaler': _scaler(0.0).state_dict()})
