r"""ShareNorm to SepNorm: :func:`to_sepnorm` turns a ShareNorm model
(converted or not) into a SepNorm model initialised from it."""
import torch

from ..models import GraphormerSepNorm
from ..nn.sep_norm import SepNorm, ShareNorm


@torch.no_grad()
def to_sepnorm(
    model: GraphormerSepNorm,
    graph_token_norm: str = 'batch',
    node_token_norm: str = 'layer',
    sepnorm_positions: str = 'all',
) -> GraphormerSepNorm:
    r"""A SepNorm copy of a ShareNorm model (for instance one returned by
    :func:`convert_graphormer`), to fine-tune a pretrained Graphormer with
    separate graph-token / node-token normalization.

    Every weight is copied. Each shared :class:`~torch.nn.LayerNorm` that
    becomes a :class:`~graphormer_sepnorm.nn.SepNorm` initialises both of its
    parts with the LayerNorm's affine :math:`(\gamma, \beta)`: the node-token
    LayerNorm (or BatchNorm) and the graph-token BatchNorm (or LayerNorm).
    BatchNorm running statistics start fresh (mean 0, variance 1, as a new
    :class:`~torch.nn.BatchNorm1d`): the pretrained model never computed batch
    statistics, so the SepNorm model's outputs differ from the ShareNorm
    model's from the start and fine-tuning must re-estimate them (train mode
    uses batch statistics from the first step). With
    :obj:`graph_token_norm="layer"` and :obj:`node_token_norm="layer"` the copy
    computes exactly what the original does.

    The configuration (and the final norm setting: the reference's unapplied
    final LayerNorm stays absent) is kept; only :obj:`norm`,
    :obj:`graph_token_norm`, :obj:`node_token_norm` and
    :obj:`sepnorm_positions` change.
    """
    if model.config['norm'] != 'share':
        raise ValueError("to_sepnorm expects a ShareNorm model (norm='share'),"
                         f" got norm={model.config['norm']!r}")
    config = dict(model.config, norm='sep', graph_token_norm=graph_token_norm,
                  node_token_norm=node_token_norm,
                  sepnorm_positions=sepnorm_positions)
    reference = next(model.parameters())
    new = GraphormerSepNorm.from_config(config).to(reference.device,
                                                   reference.dtype)
    old_modules = dict(model.named_modules())
    for name, module in new.named_modules():
        old = old_modules.get(name)
        if isinstance(module, SepNorm):
            if not isinstance(old, ShareNorm):
                raise RuntimeError(f"{name}: expected a ShareNorm in the "
                                   f"source model")
            for part in (module.graph_norm, module.node_norm):
                part.weight.copy_(old.norm.weight)
                part.bias.copy_(old.norm.bias)
                part.eps = old.norm.eps
    # Everything else has the same names.
    own = new.state_dict()
    for key, value in model.state_dict().items():
        if key in own:
            own[key].copy_(value)
    return new.train(model.training)
