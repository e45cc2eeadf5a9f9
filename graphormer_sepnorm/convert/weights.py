r"""The weight mapping: :func:`convert_graphormer` copies a reference
Graphormer's weights into a ShareNorm
:class:`~graphormer_sepnorm.GraphormerSepNorm`."""
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

import torch
from torch import Tensor

from ..models import GraphormerSepNorm
from .layout import (_ATOM_SHIFT, _COLUMN_ROWS, _MULTI_HOP_EDGE_SHIFT,
                     _REFERENCE_UNREACHABLE, _SINGLE_EDGE_SHIFT,
                     default_vocab_sizes)
from .reference import (ConversionError, _check_supported, _config_dict,
                        load_hf_graphormer)


def _split_prefix(state: Mapping[str, Tensor]) -> tuple[str, bool]:
    if any(key.startswith('encoder.graph_encoder.') for key in state):
        return 'encoder.', 'classifier.classifier.weight' in state
    if any(key.startswith('graph_encoder.') for key in state):
        return '', False
    raise ConversionError(
        "The state dict is not a Graphormer's: no 'graph_encoder.' or "
        "'encoder.graph_encoder.' keys")


def _rows(table: Tensor, vocab_sizes: Sequence[int], shift: int,
          name: str) -> Tensor:
    rows = []
    for column, size in enumerate(vocab_sizes):
        if size > _COLUMN_ROWS - shift:
            raise ConversionError(
                f"{name}: column {column} has {size} values but the reference "
                f"holds at most {_COLUMN_ROWS - shift} per column (ids would "
                f"collide with the next column)")
        start = _COLUMN_ROWS * column + shift
        if start + size > table.size(0):
            raise ConversionError(
                f"{name}: the reference table has {table.size(0)} rows, too "
                f"few for {len(vocab_sizes)} columns of sizes "
                f"{list(vocab_sizes)} (column {column} needs rows up to "
                f"{start + size - 1}); pass the vocabulary sizes of the data "
                f"the checkpoint was trained on")
        rows.append(table[start:start + size])
    return torch.cat(rows)


@torch.no_grad()
def convert_graphormer(
    source: Union[torch.nn.Module, Mapping[str, Tensor], str, Path],
    config: Any = None,
    *,
    featurizer: str = 'ogb',
    atom_vocab_sizes: Optional[Sequence[int]] = None,
    bond_vocab_sizes: Optional[Sequence[int]] = None,
    spatial_pos_max: Union[int, None, str] = 'config',
    out_channels: Optional[int] = None,
    directed: bool = False,
    max_degree: Optional[int] = None,
    max_distance: Optional[int] = None,
    dropout: Optional[float] = None,
    attention_dropout: Optional[float] = None,
    activation_dropout: Optional[float] = None,
    strict: bool = True,
) -> GraphormerSepNorm:
    r"""Builds a :class:`~graphormer_sepnorm.GraphormerSepNorm` (ShareNorm
    mode) computing what a reference Hugging Face Graphormer computes.

    Args:
        source: A :class:`GraphormerForGraphClassification` or
            :class:`GraphormerModel` instance, its state dict (then pass
            :obj:`config`), or a local directory written by
            :obj:`save_pretrained` (needs :obj:`transformers`).
        config: The :class:`GraphormerConfig` (or its :obj:`to_dict()`) of a
            state dict; taken from the model otherwise.
        featurizer (str, optional): Default vocabularies: :obj:`"ogb"` (the
            OGB molecule features) or :obj:`"zinc"`. (default: :obj:`"ogb"`)
        atom_vocab_sizes (Sequence[int], optional): Values per node-feature
            column of the data; the rows of the reference's 512-per-column
            table that they select are copied. (default: from
            :obj:`featurizer`)
        bond_vocab_sizes (Sequence[int], optional): Same for edge features.
            (default: from :obj:`featurizer`)
        spatial_pos_max (int or str, optional): The :obj:`spatial_pos_max` of
            the collator used with the checkpoint: pairs with
            :obj:`spatial_pos >= spatial_pos_max` do not attend to each
            other, i.e. :obj:`max_attention_distance = spatial_pos_max - 2`.
            :obj:`"config"` takes the configuration's value (1024 by default:
            no masking), :obj:`None` disables masking. Note that
            :class:`GraphormerDataCollator` ignores the configuration and
            masks at its own :obj:`spatial_pos_max=20` unless told otherwise.
            (default: :obj:`"config"`)
        out_channels (int, optional): Outputs of the new model. If it differs
            from the reference's :obj:`num_classes`, or the source is a
            :class:`GraphormerModel` without classifier, the last linear layer
            :obj:`head` is freshly initialised (everything else is copied).
            (default: the reference's :obj:`num_classes`)
        directed (bool, optional): Keep separate in- and out-degree tables
            (see the package docstring); otherwise they are summed into one,
            exact for undirected graphs. (default: :obj:`False`)
        max_degree (int, optional): Largest degree with its own embedding.
            (default: all of the reference's, :obj:`num_in_degree - 2`)
        max_distance (int, optional): Largest distance with its own spatial
            encoding. (default: all of the reference's, up to 509)
        dropout, attention_dropout, activation_dropout (float, optional):
            Override the reference's dropouts (for fine-tuning).
        strict (bool, optional): Raise on training-only reference options
            (:obj:`q_noise`, :obj:`layerdrop`, layer freezing) instead of
            dropping them with a warning. (default: :obj:`True`)

    Raises:
        ConversionError: For options that change the outputs and are not
            implemented (:obj:`embed_scale`, activations other than GELU,
            :obj:`multi_hop_max_dist <= 0`, ...) or vocabularies that do not
            fit the reference's tables.
    """
    if isinstance(source, (str, Path)):
        source = load_hf_graphormer(source)
    if isinstance(source, torch.nn.Module):
        if config is None:
            config = source.config
        state = source.state_dict()
    else:
        state = source
    cfg = _config_dict(config)
    _check_supported(cfg, strict)
    state = {key: value.detach().cpu() for key, value in state.items()}
    prefix, has_classifier = _split_prefix(state)
    enc = prefix + 'graph_encoder.'

    def get(key: str) -> Tensor:
        try:
            return state[key]
        except KeyError:
            raise ConversionError(f"The reference state dict has no '{key}'"
                                  f" (config and weights do not match)")

    default_atoms, default_bonds = default_vocab_sizes(featurizer)
    atom_vocab_sizes = list(atom_vocab_sizes or default_atoms)
    bond_vocab_sizes = list(bond_vocab_sizes or default_bonds)
    heads = cfg['num_attention_heads']
    width = cfg['embedding_dim']
    multi_hop = cfg['edge_type'] == 'multi_hop'
    hops = cfg['multi_hop_max_dist'] if multi_hop else 1

    reference_max_degree = min(cfg['num_in_degree'], cfg['num_out_degree']) - 2
    max_degree = reference_max_degree if max_degree is None else max_degree
    if not 0 <= max_degree <= reference_max_degree:
        raise ConversionError(f"max_degree must be in 0.."
                              f"{reference_max_degree} (the reference's "
                              f"degree tables), got {max_degree}")
    reference_max_distance = min(cfg['num_spatial'],
                                 _REFERENCE_UNREACHABLE + 1) - 2
    max_distance = (reference_max_distance
                    if max_distance is None else max_distance)
    if not 0 <= max_distance <= reference_max_distance:
        raise ConversionError(f"max_distance must be in 0.."
                              f"{reference_max_distance}, got {max_distance}")

    if spatial_pos_max == 'config':
        spatial_pos_max = cfg.get('spatial_pos_max', 1024)
    if spatial_pos_max is None or spatial_pos_max > _REFERENCE_UNREACHABLE + 1:
        # Not even the unreachable pairs (spatial_pos 511) are masked.
        max_attention_distance = None
    elif spatial_pos_max < 2:
        raise ConversionError(f"spatial_pos_max={spatial_pos_max} masks every "
                              f"pair, a node from itself included")
    else:
        max_attention_distance = int(spatial_pos_max) - 2

    num_classes = cfg['num_classes']
    out_channels = num_classes if out_channels is None else out_channels
    fresh_head = not has_classifier or out_channels != num_classes

    model = GraphormerSepNorm(
        atom_vocab_sizes=atom_vocab_sizes, bond_vocab_sizes=bond_vocab_sizes,
        out_channels=out_channels, num_layers=cfg['num_hidden_layers'],
        hidden_channels=width, ffn_channels=cfg['ffn_embedding_dim'],
        num_heads=heads,
        dropout=cfg.get('dropout', 0.1) if dropout is None else dropout,
        attention_dropout=(cfg.get('attention_dropout', 0.1)
                           if attention_dropout is None else
                           attention_dropout),
        activation_dropout=(cfg.get('activation_dropout', 0.1)
                            if activation_dropout is None else
                            activation_dropout),
        pre_norm=bool(cfg['pre_layernorm']), final_norm=False,
        embedding_norm=bool(cfg['encoder_normalize_before']), norm='share',
        edge_encoding='multi_hop' if multi_hop else 'single',
        multi_hop_max_dist=hops, max_degree=max_degree,
        max_distance=max_distance,
        max_attention_distance=max_attention_distance,
        max_nodes=cfg.get('max_nodes', 512), directed=directed)

    new: dict[str, Tensor] = {}
    # Node encoder.
    new['node_encoder.graph_token'] = get(enc +
                                          'graph_node_feature.graph_token.'
                                          'weight')[0]
    new['node_encoder.atom_embedding.embedding.weight'] = _rows(
        get(enc + 'graph_node_feature.atom_encoder.weight'), atom_vocab_sizes,
        _ATOM_SHIFT, 'atom_vocab_sizes')
    in_table = get(enc + 'graph_node_feature.in_degree_encoder.weight')
    out_table = get(enc + 'graph_node_feature.out_degree_encoder.weight')
    degree_rows = slice(1, max_degree + 2)  # Row degree + 1.
    if directed:
        new['node_encoder.in_degree_embedding.weight'] = in_table[degree_rows]
        new['node_encoder.out_degree_embedding.weight'] = out_table[
            degree_rows]
    else:
        new['node_encoder.in_degree_embedding.weight'] = (
            in_table[degree_rows] + out_table[degree_rows])

    # Attention bias.
    bias = enc + 'graph_attn_bias.'
    new['attention_bias.virtual_distance'] = get(
        bias + 'graph_token_virtual_distance.weight')[0]
    spatial = get(bias + 'spatial_pos_encoder.weight')
    unreachable = (spatial[_REFERENCE_UNREACHABLE + 1:_REFERENCE_UNREACHABLE +
                           2] if spatial.size(0) > _REFERENCE_UNREACHABLE + 1
                   else spatial.new_zeros(1, heads))
    new['attention_bias.spatial_embedding.weight'] = torch.cat(
        [spatial[1:max_distance + 2], unreachable])
    edge_table = get(bias + 'edge_encoder.weight')
    if edge_table[0].abs().max() > 0:
        raise ConversionError(
            "The reference's edge_encoder row 0 ('no edge', padding_idx) is "
            "not zero; the reference adds it for every pair without an edge, "
            "which this model does not reproduce")
    new['attention_bias.edge_embedding.embedding.weight'] = _rows(
        edge_table, bond_vocab_sizes,
        _MULTI_HOP_EDGE_SHIFT if multi_hop else _SINGLE_EDGE_SHIFT,
        'bond_vocab_sizes')
    if multi_hop:
        new['attention_bias.hop_weight'] = get(
            bias + 'edge_dis_encoder.weight').reshape(-1, heads,
                                                      heads)[:hops]

    # Norms and blocks.
    if cfg['encoder_normalize_before']:
        for name in ('weight', 'bias'):
            new[f'embedding_norm.norm.{name}'] = get(
                f'{enc}emb_layer_norm.{name}')
    for i in range(cfg['num_hidden_layers']):
        src, dst = f'{enc}layers.{i}.', f'layers.{i}.'
        attn = src + 'self_attn.'
        for name in ('weight', 'bias'):
            projections = []
            for proj in ('q_proj', 'k_proj', 'v_proj'):
                key = f'{attn}{proj}.{name}'
                if name == 'bias' and key not in state:  # config.bias=False
                    projections.append(torch.zeros(width))
                else:
                    projections.append(get(key))
            new[f'{dst}attention.qkv.{name}'] = torch.cat(projections)
            out_key = f'{attn}out_proj.{name}'
            new[f'{dst}attention.out.{name}'] = (
                state[out_key] if out_key in state or name == 'weight' else
                torch.zeros(width))
            new[f'{dst}attention_norm.norm.{name}'] = get(
                f'{src}self_attn_layer_norm.{name}')
            new[f'{dst}ffn_norm.norm.{name}'] = get(
                f'{src}final_layer_norm.{name}')
            new[f'{dst}fc1.{name}'] = get(f'{src}fc1.{name}')
            new[f'{dst}fc2.{name}'] = get(f'{src}fc2.{name}')

    # Head.
    for name in ('weight', 'bias'):
        new[f'head_transform.{name}'] = get(
            f'{prefix}lm_head_transform_weight.{name}')
        new[f'head_norm.{name}'] = get(f'{prefix}layer_norm.{name}')
    if fresh_head:
        new['head.weight'] = model.head.weight.detach().clone()
        new['head.bias'] = model.head.bias.detach().clone()
    else:
        new['head.weight'] = get('classifier.classifier.weight')
        new['head.bias'] = get('classifier.lm_output_learned_bias').expand(
            num_classes).clone()

    # Keep the reference's precision (float64 weights stay float64).
    model = model.to(new['node_encoder.graph_token'].dtype)
    own = model.state_dict()
    missing = sorted(set(own) - set(new))
    if missing:  # A bug here, not a user error.
        raise RuntimeError(f"convert_graphormer left {missing} unset")
    for key, value in new.items():
        if own[key].shape != value.shape:
            raise ConversionError(
                f"Shape mismatch for {key}: reference gives "
                f"{tuple(value.shape)}, model expects {tuple(own[key].shape)}")
        own[key].copy_(value.to(own[key].dtype))
    return model.eval()
