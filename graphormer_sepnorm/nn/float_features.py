r"""Continuous input features beside the categorical ones: a feature
tensor is :obj:`[categorical ids | float columns]`, the ids embedded by a
:class:`~graphormer_sepnorm.nn.CategoricalEmbedding`, the float columns
projected by a :class:`torch.nn.Linear`."""
from typing import Optional

import torch
from torch import Tensor
from torch.nn import Linear


def float_projection(float_channels: int, channels: int) -> Optional[Linear]:
    r"""The projection of :obj:`float_channels` float columns to
    :obj:`channels`, initialized as Graphormer's linear layers (normal with
    standard deviation 0.02, zero bias); :obj:`None` without float
    columns, so that a model without them keeps its parameters."""
    if float_channels < 0:
        raise ValueError(f"float_channels must be >= 0, got {float_channels}")
    return Linear(float_channels, channels) if float_channels else None


def reset_float_projection(linear: Optional[Linear]) -> None:
    r"""Graphormer's initialization of :func:`float_projection`'s layer."""
    if linear is not None:
        torch.nn.init.normal_(linear.weight, std=0.02)
        torch.nn.init.zeros_(linear.bias)


def split_columns(features: Tensor, num_ids: int, num_floats: int,
                  name: str) -> tuple[Tensor, Optional[Tensor]]:
    r"""Splits :obj:`features` :obj:`[num_items, num_ids + num_floats]`
    into its categorical ids (:obj:`torch.long`) and its float columns
    (:obj:`None` if :obj:`num_floats` is 0, when :obj:`features` is
    returned as it is). :obj:`name` names the input in errors."""
    if not num_floats:
        return features, None
    if features.dim() == 1:
        features = features.unsqueeze(-1)
    if not features.is_floating_point():
        raise ValueError(
            f"'{name}' must be a float tensor: the model reads "
            f"{num_floats} float column(s) from it (after {num_ids} "
            f"categorical id column(s)), got {features.dtype}")
    if features.size(-1) != num_ids + num_floats:
        raise ValueError(
            f"'{name}' has {features.size(-1)} columns but the model reads "
            f"{num_ids} categorical id column(s) then {num_floats} float "
            f"column(s); build the model with the dataset's column counts")
    return features[:, :num_ids].long(), features[:, num_ids:]
