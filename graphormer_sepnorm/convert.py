r"""Import weights of the reference Graphormer (the port of Microsoft's
Graphormer in Hugging Face :obj:`transformers`,
:class:`GraphormerForGraphClassification` / :class:`GraphormerModel`) into
:class:`~graphormer_sepnorm.GraphormerSepNorm`.

:func:`convert_graphormer` builds a model with the same architecture in
ShareNorm mode (:obj:`norm="share"`, every norm one
:class:`~torch.nn.LayerNorm`) whose outputs match the reference's in
evaluation mode (tested to :math:`10^{-5}` relative error in float64, see
:obj:`tests/test_convert.py`) on graphs preprocessed by
:class:`~graphormer_sepnorm.transforms.AddShortestPaths`.
:func:`to_sepnorm` then turns any ShareNorm model (converted or not) into a
SepNorm model initialised from it, to fine-tune pretrained checkpoints
(PCQM4M Graphormer) with SepNorm.

How the reference's weights map onto ours:

* **Atom table.** The reference has one :obj:`num_atoms + 1`-row table with
  512 rows per feature column: value :math:`v` of column :math:`c` is row
  :math:`v + 512c + 3` (:obj:`convert_to_single_emb` adds :math:`512c + 1`,
  :obj:`preprocess_item` adds 1 twice). Ours keeps only the rows of the
  vocabulary, :obj:`atom_vocab_sizes` (default: the nine OGB atom feature
  dimensions).
* **Degrees.** The reference sums an in-degree and an out-degree embedding,
  row :math:`\deg + 1`, but its preprocessing feeds both with the same row
  sums of the adjacency matrix. Our single table is the sum of the two
  tables: exact for undirected graphs (every molecule dataset, where in- and
  out-degree coincide). With :obj:`directed=True` the two tables are copied
  separately and our model uses the true in- and out-degree, which differs
  from the reference on directed graphs (there it is a starting point, not an
  equivalent model).
* **Spatial encoding.** Row :math:`d + 1` is distance :math:`d`; row 511
  (distance 510, the reference's "unreachable") is our unreachable row.
* **Edges.** The reference's edge table is read at :math:`v + 512c + 3` by the
  multi-hop encoding (ids of :obj:`input_edges`) but at :math:`v + 512c + 2`
  by the single-edge encoding (ids of :obj:`attn_edge_type`); the rows of the
  configured :obj:`edge_type` are copied. Row 0 (padding, "no edge") must be
  zero, as the reference keeps it (:obj:`padding_idx=0`).
* **Multi-hop matrices.** :obj:`edge_dis_encoder.weight` viewed as
  :obj:`[num_edge_dis, heads, heads]`; the first :obj:`multi_hop_max_dist` are
  ours.
* **Attention.** :obj:`q_proj`, :obj:`k_proj`, :obj:`v_proj` are stacked into
  our fused :obj:`qkv` (the reference scales :math:`q` by
  :math:`d^{-1/2}` after its bias, as scaled dot-product attention does).
* **Head.** :obj:`lm_head_transform_weight` :math:`\to` GELU :math:`\to`
  :obj:`layer_norm` :math:`\to` :obj:`classifier` (a bias-free linear layer
  plus one scalar :obj:`lm_output_learned_bias`) become our
  :obj:`head_transform`, :obj:`head_norm` and :obj:`head` (the scalar bias
  copied into every output's bias).
* **Final norm.** The reference builds the encoder's final LayerNorm in
  pre-LN mode but never applies it, so the converted model has
  :obj:`final_norm=False`.
* **Attention masking.** The reference's collator sets the bias to
  :math:`-\infty` where :obj:`spatial_pos >= spatial_pos_max` (distance
  :math:`\ge` :obj:`spatial_pos_max - 1`, unreachable included when
  :obj:`spatial_pos_max <= 511`): ours is
  :obj:`max_attention_distance = spatial_pos_max - 2`.

Intentional differences of the converted model (outputs identical on the
graphs the reference accepts): vocabularies sized from the data (ids beyond
them raise a readable error instead of silently reading a neighbouring
column's rows); degrees above :obj:`max_degree` and distances above
:obj:`max_distance` share the last embedding instead of indexing out of the
table; paths of length 510 and more are not declared unreachable; on ties
between shortest paths the multi-hop encoding may follow a different (equally
short) path than the reference's Floyd-Warshall reconstruction.

Loading a saved directory needs :obj:`transformers` (an optional dependency:
:obj:`pip install "graphormer-sepnorm[reference]"` or
:obj:`pip install "transformers>=4.41,<4.58"`); converting an instance or a
state dict with a plain configuration :obj:`dict` does not.
"""
import math
import warnings
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np
import torch
from torch import Tensor

from .models import GraphormerSepNorm
from .nn.sep_norm import SepNorm, ShareNorm

__all__ = [
    'ConversionError', 'convert_graphormer', 'load_hf_graphormer',
    'to_sepnorm', 'reference_inputs', 'OGB_ATOM_VOCAB_SIZES',
    'OGB_BOND_VOCAB_SIZES', 'ZINC_ATOM_VOCAB_SIZES', 'ZINC_BOND_VOCAB_SIZES',
    'default_vocab_sizes'
]

#: :func:`ogb.utils.features.get_atom_feature_dims` and
#: :func:`~ogb.utils.features.get_bond_feature_dims`.
OGB_ATOM_VOCAB_SIZES = (119, 5, 12, 12, 10, 6, 6, 2, 2)
OGB_BOND_VOCAB_SIZES = (5, 6, 2)
#: ZINC (:func:`~graphormer_sepnorm.data.featurize.smiles_to_zinc_graph`):
#: 28 atom types, bond types 1..3.
ZINC_ATOM_VOCAB_SIZES = (28, )
ZINC_BOND_VOCAB_SIZES = (4, )

# The reference's tables hold 512 rows per feature column.
_COLUMN_ROWS = 512
# Offsets of a value inside its column's block (see the module docstring).
_ATOM_SHIFT = 3
_MULTI_HOP_EDGE_SHIFT = 3
_SINGLE_EDGE_SHIFT = 2
# The reference's Floyd-Warshall calls distance 510 "unreachable": spatial
# position 511.
_REFERENCE_UNREACHABLE = 510

_INSTALL_HINT = ('pip install "graphormer-sepnorm[reference]" (or pip install '
                 '"transformers>=4.41,<4.58" "Cython<3.1")')


class ConversionError(ValueError):
    r"""A reference checkpoint uses an option this package cannot reproduce,
    or does not fit the requested vocabularies."""


def default_vocab_sizes(featurizer: str) -> tuple[tuple[int, ...],
                                                  tuple[int, ...]]:
    r"""Atom and bond vocabulary sizes of a featurizer name
    (:obj:`"ogb"` or :obj:`"zinc"`)."""
    key = str(featurizer).lower().strip()
    if key == 'ogb':
        return OGB_ATOM_VOCAB_SIZES, OGB_BOND_VOCAB_SIZES
    if key == 'zinc':
        return ZINC_ATOM_VOCAB_SIZES, ZINC_BOND_VOCAB_SIZES
    raise ValueError(f"Unknown featurizer {featurizer!r}; valid choices are "
                     f"'ogb' and 'zinc' (or pass atom_vocab_sizes and "
                     f"bond_vocab_sizes)")


def _import_reference():
    try:
        from transformers.models.deprecated.graphormer import (
            configuration_graphormer, modeling_graphormer)
    except ImportError:
        try:  # transformers < 4.40 kept it outside "deprecated".
            from transformers.models.graphormer import (
                configuration_graphormer, modeling_graphormer)
        except ImportError as error:
            raise ImportError(
                f"Loading a Hugging Face Graphormer needs the optional "
                f"dependency 'transformers' with its Graphormer model, which "
                f"is not importable here ({error}). Install it with "
                f"{_INSTALL_HINT}") from error
    return configuration_graphormer, modeling_graphormer


def load_hf_graphormer(path: Union[str, Path]) -> torch.nn.Module:
    r"""Loads a :class:`GraphormerForGraphClassification` or
    :class:`GraphormerModel` saved with :obj:`save_pretrained` in the local
    directory :obj:`path` (needs :obj:`transformers`)."""
    path = Path(path)
    if not (path / 'config.json').is_file():
        raise FileNotFoundError(
            f"{path} is not a Hugging Face model directory (no config.json); "
            f"pass the directory written by model.save_pretrained(...)")
    config_module, modeling = _import_reference()
    config = config_module.GraphormerConfig.from_pretrained(str(path))
    architectures = getattr(config, 'architectures', None) or []
    cls = (modeling.GraphormerModel if architectures == ['GraphormerModel']
           else modeling.GraphormerForGraphClassification)
    return cls.from_pretrained(str(path)).eval()


def _config_dict(config: Any) -> dict[str, Any]:
    if config is None:
        raise ValueError("A state dict needs its GraphormerConfig (or the "
                         "config's to_dict()) as 'config'")
    if isinstance(config, Mapping):
        values = dict(config)
    else:
        values = config.to_dict()
    missing = [key for key in _REQUIRED_KEYS if key not in values]
    if missing:
        raise ConversionError(
            f"The reference configuration lacks {missing}; pass a "
            f"GraphormerConfig or its complete to_dict() (a config.json "
            f"written by save_pretrained omits default values: load it with "
            f"GraphormerConfig.from_pretrained)")
    return values


_REQUIRED_KEYS = ('num_classes', 'num_atoms', 'num_edges', 'num_in_degree',
                  'num_out_degree', 'num_spatial', 'num_edge_dis',
                  'multi_hop_max_dist', 'edge_type', 'num_hidden_layers',
                  'embedding_dim', 'ffn_embedding_dim', 'num_attention_heads',
                  'pre_layernorm', 'encoder_normalize_before')


def _check_supported(cfg: Mapping[str, Any], strict: bool) -> None:
    def unsupported(message: str) -> None:
        raise ConversionError(f"Cannot convert this reference Graphormer: "
                              f"{message}")

    if cfg.get('activation_fn', 'gelu') != 'gelu':
        unsupported(f"activation_fn={cfg['activation_fn']!r}; this package "
                    f"uses GELU (the exact erf form) only")
    if cfg.get('embed_scale') is not None:
        unsupported(f"embed_scale={cfg['embed_scale']} (token embeddings "
                    f"scaled before the encoder) is not implemented")
    if cfg.get('share_input_output_embed', False):
        unsupported("share_input_output_embed=True is not implemented (and "
                    "fails in the reference itself)")
    width = cfg['embedding_dim']
    for key in ('kdim', 'vdim'):
        if cfg.get(key) not in (None, width):
            unsupported(f"{key}={cfg[key]} differs from embedding_dim "
                        f"({width}); only self-attention is supported")
    if not cfg.get('self_attention', True):
        unsupported("self_attention=False")
    hops = cfg['multi_hop_max_dist']
    if cfg['edge_type'] == 'multi_hop':
        if hops <= 0:
            unsupported(f"multi_hop_max_dist={hops} (every hop of every "
                        f"path, divided by the unclipped distance); set it to "
                        f"the longest path length to use")
        if hops > cfg['num_edge_dis']:
            unsupported(f"multi_hop_max_dist={hops} is more than "
                        f"num_edge_dis={cfg['num_edge_dis']} per-hop matrices"
                        f" (the reference fails on longer paths)")
    training_only = []
    if cfg.get('q_noise', 0.0) > 0:
        training_only.append(f"q_noise={cfg['q_noise']} (quantization noise)")
    if cfg.get('layerdrop', 0.0) > 0:
        training_only.append(f"layerdrop={cfg['layerdrop']}")
    if cfg.get('num_trans_layers_to_freeze', 0) > 0:
        training_only.append(f"num_trans_layers_to_freeze="
                             f"{cfg['num_trans_layers_to_freeze']}")
    if cfg.get('freeze_embeddings', False):
        training_only.append('freeze_embeddings=True')
    if training_only:
        message = (f"{', '.join(training_only)} only act during training and "
                   f"are not implemented here")
        if strict:
            unsupported(message + "; pass strict=False (CLI: --no-strict) to "
                        "convert anyway: evaluation outputs are identical, "
                        "fine-tuning runs without them")
        warnings.warn(message + '; converted without them', stacklevel=3)


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
            (see the module docstring); otherwise they are summed into one,
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
        raise ConversionError(f"max_degree must be in 0..{reference_max_degree}"
                              f" (the reference's degree tables), got "
                              f"{max_degree}")
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


def reference_inputs(graphs: Sequence[Any], spatial_pos_max: Optional[int]
                     = None, max_hops: Optional[int] = None,
                     dtype: torch.dtype = torch.float32) -> dict[str, Tensor]:
    r"""The reference model's batched inputs built from graphs preprocessed by
    :class:`~graphormer_sepnorm.transforms.AddShortestPaths` (their
    :obj:`spd` and :obj:`path_next`, so the multi-hop edge input follows the
    same shortest paths as this package): what :obj:`preprocess_item`
    followed by :class:`GraphormerDataCollator` give, but with our paths.

    Args:
        graphs: :class:`~torch_geometric.data.Data` objects with :obj:`x`,
            :obj:`edge_index`, :obj:`edge_attr`, :obj:`spd` and
            :obj:`path_next`.
        spatial_pos_max (int, optional): As the collator's; :obj:`None` masks
            nothing. (default: :obj:`None`)
        max_hops (int, optional): Hops of :obj:`input_edges` kept (the
            reference only reads :obj:`multi_hop_max_dist`); all if
            :obj:`None`. (default: :obj:`None`)
        dtype (torch.dtype, optional): Of :obj:`attn_bias`.
    """
    batch_size = len(graphs)
    sizes = [int(g.num_nodes) for g in graphs]
    n = max(sizes)
    edge_cols = _edge_attr(graphs[0]).shape[1]
    node_cols = graphs[0].x.view(sizes[0], -1).shape[1]
    longest = max(int(g.spd.max()) if g.spd.numel() else 0 for g in graphs)
    hops = max(1, longest if max_hops is None else min(longest, max_hops))
    input_nodes = np.zeros((batch_size, n, node_cols), np.int64)
    degree = np.zeros((batch_size, n), np.int64)
    spatial_pos = np.zeros((batch_size, n, n), np.int64)
    attn_bias = np.zeros((batch_size, n + 1, n + 1), np.float64)
    attn_edge_type = np.zeros((batch_size, n, n, edge_cols), np.int64)
    input_edges = np.zeros((batch_size, n, n, hops, edge_cols), np.int64)
    for b, (graph, size) in enumerate(zip(graphs, sizes)):
        x = graph.x.view(size, -1).numpy()
        src, dst = graph.edge_index.numpy()
        column_offset = _COLUMN_ROWS * np.arange(edge_cols)
        edge_ids = _edge_attr(graph) + column_offset
        input_nodes[b, :size] = (x + _COLUMN_ROWS * np.arange(node_cols) +
                                 _ATOM_SHIFT)
        degree[b, :size] = np.bincount(src, minlength=size) + 1
        spd = graph.spd.view(size, size).numpy().astype(np.int64)
        nxt = graph.path_next.view(size, size).numpy().astype(np.int64)
        reachable = spd >= 0
        spatial = np.where(reachable, spd, _REFERENCE_UNREACHABLE) + 1
        spatial_pos[b, :size, :size] = spatial
        if spatial_pos_max is not None:
            attn_bias[b, 1:size + 1, 1:size + 1][
                spatial >= spatial_pos_max] = -math.inf
        dense = np.zeros((size, size, edge_cols), np.int64)
        dense[src, dst] = edge_ids + _SINGLE_EDGE_SHIFT
        attn_edge_type[b, :size, :size] = dense
        current = np.broadcast_to(np.arange(size)[:, None], (size, size))
        target = np.broadcast_to(np.arange(size)[None, :], (size, size))
        for hop in range(hops):
            active = reachable & (spd > hop)
            step = np.where(active, nxt[current, target], current)
            on_path = dense[current, step] + 1  # +1: v + 512c + 3.
            input_edges[b, :size, :size, hop] = np.where(
                active[..., None], on_path, 0)
            current = step
    as_tensor = torch.from_numpy
    return dict(input_nodes=as_tensor(input_nodes),
                input_edges=as_tensor(input_edges),
                attn_bias=as_tensor(attn_bias).to(dtype),
                in_degree=as_tensor(degree), out_degree=as_tensor(degree),
                spatial_pos=as_tensor(spatial_pos),
                attn_edge_type=as_tensor(attn_edge_type))


def _edge_attr(graph: Any) -> np.ndarray:
    edge_attr = getattr(graph, 'edge_attr', None)
    num_edges = graph.edge_index.size(1)
    if edge_attr is None:
        return np.zeros((num_edges, 1), np.int64)
    if edge_attr.dim() == 1:
        edge_attr = edge_attr.view(-1, 1)
    return edge_attr.numpy().astype(np.int64)
