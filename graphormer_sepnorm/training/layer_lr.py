r"""Layer-wise learning-rate decay for fine-tuning (:obj:`optim.layer_lr_decay`):
the layers nearest the output learn at the full rate, each one further down
at :obj:`decay` times the rate of the one above, so that a pretrained
encoder's lower layers move least (as in BEiT and ELECTRA's fine-tuning,
`arXiv:2106.08254 <https://arxiv.org/abs/2106.08254>`_).

Depths of :class:`~graphormer_sepnorm.GraphormerSepNorm`'s parameters, with
:math:`L` encoder layers: the prediction head, the final norm and the
molecule-feature projection (new in a fine-tuned model) are at depth 0 (the
full rate); encoder layer :math:`i` (from 0) at depth :math:`L - i`; the
embeddings (node encoder, attention bias, embedding norm) at :math:`L + 1`.
"""
from __future__ import annotations

from typing import Any

from torch.nn import Module, Parameter

__all__ = ['layer_depths', 'layer_lr_groups']

#: Submodules of the model at depth 0 (the full learning rate).
TOP = ('head', 'head_transform', 'head_norm', 'final_norm',
       'graph_feature_encoder')
#: Submodules of the model below every encoder layer.
EMBEDDINGS = ('node_encoder', 'attention_bias', 'embedding_norm')


def layer_depths(model: Module) -> dict[str, int]:
    r"""The depth of every parameter of :obj:`model` (a
    :class:`~graphormer_sepnorm.GraphormerSepNorm`), by name.

    Raises:
        ValueError: A parameter outside the submodules this module knows
            (a model changed without this table).
    """
    num_layers = len(model.layers)
    depths = {}
    for name, _ in model.named_parameters():
        top, _, rest = name.partition('.')
        if top in TOP:
            depths[name] = 0
        elif top in EMBEDDINGS:
            depths[name] = num_layers + 1
        elif top == 'layers':
            depths[name] = num_layers - int(rest.partition('.')[0])
        else:
            raise ValueError(f"parameter {name!r} has no depth for "
                             f"optim.layer_lr_decay; add its submodule to "
                             f"graphormer_sepnorm/training/layer_lr.py")
    return depths


def layer_lr_groups(model: Module, lr: float, decay: float
                    ) -> list[dict[str, Any]]:
    r"""AdamW's parameter groups of :obj:`model`: one per depth
    (:func:`layer_depths`), the full rate first, with learning rate
    :obj:`lr * decay ** depth` and :obj:`"depth"` recorded; one group of
    every parameter at :obj:`lr` when :obj:`decay` is 1.

    Args:
        model (Module): A :class:`~graphormer_sepnorm.GraphormerSepNorm`.
        lr (float): The learning rate of depth 0 (:obj:`optim.lr`).
        decay (float): The factor per depth, in :math:`(0, 1]`.
    """
    if not 0.0 < decay <= 1.0:
        raise ValueError(f"optim.layer_lr_decay must be in (0, 1], got "
                         f"{decay}")
    if decay == 1.0:
        return [{'params': list(model.parameters()), 'lr': lr, 'depth': 0}]
    depths = layer_depths(model)
    by_depth: dict[int, list[Parameter]] = {}
    for name, parameter in model.named_parameters():
        by_depth.setdefault(depths[name], []).append(parameter)
    return [{'params': by_depth[depth], 'lr': lr * decay**depth,
             'depth': depth} for depth in sorted(by_depth)]
