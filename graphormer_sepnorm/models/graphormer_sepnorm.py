from __future__ import annotations

import dataclasses
import inspect
import warnings
from typing import (TYPE_CHECKING, Annotated, Any, Literal, Mapping,
                    Optional, Sequence, Union)

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import LayerNorm, Linear, Module, ModuleList

from ..nn.batch_norm_statistics import mark_statistics_current, warn_if_stale
from ..nn.dropout import Dropout
from ..nn.encoder_layer import GraphormerLayer
from ..nn.graph_attention_bias import EdgeEncoding, GraphAttentionBias
from ..nn.graph_features import GraphFeatureEncoder
from ..nn.node_encoder import GraphormerNodeEncoder
from ..nn.packed_tokens import PackedTokens
from ..nn.sep_norm import NormKind, SepNorm, ShareNorm
from ..transforms.batch_layout import BatchLayout, batch_layout
from .config import (Doc, Featurization, Norm, config_from,
                     option_signature, options_dataclass, unknown_option)

if TYPE_CHECKING:  # pragma: no cover
    from torch_geometric.data import Data


@option_signature
class GraphormerSepNorm(Module):
    r"""Graphormer, from the `"Do Transformers Really Perform Bad for Graph
    Representation?" <https://arxiv.org/abs/2106.05234>`_ paper, in which the
    normalizations of the token sequence can be **SepNorm**, from the
    `"On Separate Normalization in Self-supervised Transformers"
    <https://arxiv.org/abs/2309.12931>`_ paper: the graph token and the node
    tokens are normalized separately (by default batch norm over the graph
    tokens of the batch, layer norm per node token).

    The forward pass takes a :class:`~torch_geometric.data.Batch` of graphs
    preprocessed by :class:`~graphormer_sepnorm.transforms.AddShortestPaths`
    with categorical node features :obj:`x` and edge features
    :obj:`edge_attr`, and returns :obj:`[num_graphs, out_channels]` read from
    the graph token alone. The structure of the batch (token layout, node
    pairs, the walk of their shortest paths, degrees) is prepared with the
    batch, as :obj:`batch.layout`, by
    :func:`~graphormer_sepnorm.transforms.add_batch_layout` with
    :meth:`layout_options`; the forward pass then only embeds, gathers,
    multiplies and adds, with no host synchronization, and compiles with
    :func:`torch.compile` in one graph. A batch without a layout gets one
    computed in the forward pass (on the host).

    Normalization. With :obj:`norm="share"` every norm is one
    :class:`~torch.nn.LayerNorm` over all tokens (the baseline). With
    :obj:`norm="sep"`, the norms named by :obj:`sepnorm_positions` are
    :class:`~graphormer_sepnorm.nn.SepNorm` (the others stay shared): the
    two norms of each block, and with pre-LN the final norm. One exception is
    by design: with pre-LN, the first block's attention norm receives the raw
    graph-token embedding, identical for every graph, so batch statistics over
    it have zero variance (the running variance collapses and evaluation
    outputs become noise). That one norm therefore normalizes the graph token
    with layer norm; every later norm sees graph tokens that differ between
    graphs.

    Node order. The output does not depend on how the nodes are numbered,
    with one exception shared with the reference: the multi-hop edge
    encoding (the default) follows one shortest path per node pair, and when
    several tie, the numbering picks which. Graphs built from SMILES by this
    package are in RDKit's canonical atom order; for graphs built otherwise,
    :class:`~graphormer_sepnorm.transforms.CanonicalNodeOrder` before
    :class:`~graphormer_sepnorm.transforms.AddShortestPaths` removes the
    dependence (the default keeps the graphs as given, as the reference
    does).

    Differences from the reference implementation (Microsoft's Graphormer and
    its port in Hugging Face :obj:`transformers`) are listed in
    ``configs/README.md``: the pre-LN final norm is applied (the reference
    builds it but never calls it), vocabularies are sized from the data,
    degrees and distances above the maxima share the last embedding, and
    paths through node 0 are kept.

    Args:
{config_args}
    """
    def __init__(
        self,
        atom_vocab_sizes: Annotated[Sequence[int], Doc(
            "Number of values of each categorical column of `x` (ZINC's 28 "
            "atom types by default).")] = (28, ),
        bond_vocab_sizes: Annotated[Optional[Sequence[int]], Doc(
            "Number of values of each column of `edge_attr`; None for "
            "graphs without edge features.")] = (4, ),
        out_channels: Annotated[int, Doc('Outputs per graph.')] = 1,
        num_layers: Annotated[int, Doc('Transformer blocks.',
                                       range='> 0')] = 12,
        hidden_channels: Annotated[int, Doc('Token (embedding) size.',
                                            range='> 0')] = 80,
        ffn_channels: Annotated[int, Doc('Feed-forward hidden size.',
                                         range='> 0')] = 80,
        num_heads: Annotated[int, Doc('Attention heads.', range='> 0')] = 8,
        dropout: Annotated[float, Doc(
            'Dropout on the input tokens and on each residual branch.',
            range='[0, 1)')] = 0.0,
        attention_dropout: Annotated[float, Doc(
            'Dropout on attention weights.', range='[0, 1)')] = 0.1,
        activation_dropout: Annotated[float, Doc(
            'Dropout after the GELU of the feed-forward networks.',
            range='[0, 1)')] = 0.1,
        pre_norm: Annotated[bool, Doc(
            'Pre-LN blocks if true, post-LN otherwise.')] = True,
        final_norm: Annotated[bool, Doc(
            'With pre-LN, normalize the last block output.')] = True,
        embedding_norm: Annotated[bool, Doc(
            'Normalize the input tokens (encoder_normalize_before).')
        ] = False,
        norm: Annotated[Norm, Doc(
            'SepNorm (`sep`) or one shared LayerNorm (`share`).')] = 'sep',
        graph_token_norm: Annotated[NormKind, Doc(
            "SepNorm's graph-token norm.")] = 'batch',
        node_token_norm: Annotated[NormKind, Doc(
            "SepNorm's node-token norm.")] = 'layer',
        sepnorm_positions: Annotated[Literal['all', 'blocks', 'final'], Doc(
            'Which norms are SepNorm when norm=sep (`blocks` = all but the '
            'final norm).')] = 'all',
        edge_encoding: Annotated[EdgeEncoding, Doc(
            "Graphormer's edge encoding.")] = 'multi_hop',
        multi_hop_max_dist: Annotated[int, Doc(
            'Hops of a shortest path that enter the multi-hop edge '
            'encoding.')] = 20,
        max_degree: Annotated[int, Doc(
            'Largest degree with its own embedding.')] = 64,
        max_distance: Annotated[int, Doc(
            'Largest distance with its own spatial encoding.')] = 64,
        max_attention_distance: Annotated[Optional[int], Doc(
            'If set, node pairs farther apart do not attend to each '
            'other.')] = None,
        max_nodes: Annotated[int, Doc('Largest graph the model accepts.',
                                      range='> 0')] = 512,
        directed: Annotated[bool, Doc(
            'Separate in- and out-degree embeddings.')] = False,
        node_float_channels: Annotated[int, Doc(
            'Float columns of `x` after its categorical ones, entering '
            'through a linear projection (0: none; with atom_vocab_sizes=[] '
            '`x` is float columns only).', range='>= 0')] = 0,
        edge_float_channels: Annotated[int, Doc(
            'Float columns of `edge_attr` after its categorical ones, '
            'entering through a linear projection (0: none).',
            range='>= 0')] = 0,
        featurization: Annotated[Featurization, Doc(
            'The featurization of the graphs the model is trained on: '
            "this package's `zinc` or `ogb` featurizer, PyG's `pyg` "
            '(torch_geometric.utils.from_smiles) or `custom`; load_model '
            'refuses data of another.')] = 'custom',
        graph_feature_channels: Annotated[int, Doc(
            'Molecule features per graph (`data.graph_features`) projected '
            "and added to the graph token; 0: none (the paper's model). "
            'Training fills it from data.molecule_features and '
            'data.feature_columns.', range='>= 0')] = 0,
        *,
        attention_buckets: Annotated[int, Doc(
            'Run the encoder on this many buckets of graphs of similar '
            'size, each padded only to its own largest graph (same result, '
            'less padding; see PackedTokens). A runtime setting, not saved '
            'with the model: on a GPU the data pipeline uses one bucket.',
            range='> 0')] = 4,
    ) -> None:
        super().__init__()
        c = config_from(GraphormerConfig, locals())
        self.config: dict[str, Any] = dataclasses.asdict(c)
        self.out_channels = c.out_channels
        self.hidden_channels = c.hidden_channels
        self.max_nodes = c.max_nodes
        self.attention_buckets = attention_buckets

        self.node_encoder = GraphormerNodeEncoder(
            c.atom_vocab_sizes, c.hidden_channels, c.max_degree, c.directed,
            c.node_float_channels)
        self.attention_bias = GraphAttentionBias(
            c.num_heads, c.bond_vocab_sizes, c.edge_encoding,
            c.multi_hop_max_dist, c.max_distance, c.max_attention_distance,
            c.edge_float_channels)
        # Molecule features in the graph token: no module (and no
        # state-dict key) without them.
        self.graph_feature_encoder = (
            GraphFeatureEncoder(c.graph_feature_channels, c.hidden_channels)
            if c.graph_feature_channels else None)
        self.input_dropout = Dropout(c.dropout)

        def make_norm(sep: bool, constant_token: bool = False) -> Module:
            if not sep:
                return ShareNorm(c.hidden_channels)
            return SepNorm(c.hidden_channels, 'layer' if constant_token
                           else c.graph_token_norm, c.node_token_norm)

        sep = c.norm == 'sep'
        sep_blocks = sep and c.sepnorm_positions in ('all', 'blocks')
        sep_final = sep and c.sepnorm_positions in ('all', 'final')
        # The embedding norm and, with pre-LN, the first block's attention
        # norm see the same graph-token embedding for every graph.
        self.embedding_norm = (make_norm(sep_blocks, constant_token=True)
                               if c.embedding_norm else None)
        self.layers = ModuleList()
        for i in range(c.num_layers):
            first_sees_embedding = c.pre_norm and i == 0
            self.layers.append(
                GraphormerLayer(
                    c.hidden_channels, c.ffn_channels, c.num_heads,
                    attention_norm=make_norm(
                        sep_blocks, constant_token=first_sees_embedding),
                    ffn_norm=make_norm(sep_blocks),
                    pre_norm=c.pre_norm, dropout=c.dropout,
                    attention_dropout=c.attention_dropout,
                    activation_dropout=c.activation_dropout))
        self.final_norm = (make_norm(sep_final)
                           if c.pre_norm and c.final_norm else None)

        # Graphormer's prediction head on the graph token.
        self.head_transform = Linear(c.hidden_channels, c.hidden_channels)
        self.head_norm = LayerNorm(c.hidden_channels)
        self.head = Linear(c.hidden_channels, c.out_channels)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""Graphormer's initialization: every weight and embedding normal
        with standard deviation 0.02, biases zero, norms to identity."""
        self.node_encoder.reset_parameters()
        self.attention_bias.reset_parameters()
        for module in (self.embedding_norm, self.final_norm,
                       self.graph_feature_encoder):
            if module is not None:
                module.reset_parameters()
        for layer in self.layers:
            layer.reset_parameters()
        for linear in (self.head_transform, self.head):
            torch.nn.init.normal_(linear.weight, std=0.02)
            torch.nn.init.zeros_(linear.bias)
        self.head_norm.reset_parameters()
        mark_statistics_current(self)

    #: Warn when the model is evaluated with BatchNorm statistics (SepNorm's
    #: graph token) older than its weights: trained since it was built,
    #: loaded or recalibrated
    #: (:func:`~graphormer_sepnorm.nn.recalibrate_batch_norm`). Set it to
    #: :obj:`False` on a model validated with its running statistics on
    #: purpose.
    warn_stale_statistics: bool = True

    def load_state_dict(self, state_dict: Mapping[str, Any],
                        strict: bool = True, assign: bool = False) -> Any:
        r""":meth:`torch.nn.Module.load_state_dict`; the loaded BatchNorm
        statistics are taken to match the loaded weights (see
        :attr:`warn_stale_statistics`)."""
        result = super().load_state_dict(state_dict, strict, assign)
        mark_statistics_current(self)
        return result

    @classmethod
    def from_config(cls, config: Union[Any, Mapping[str, Any]]
                    ) -> GraphormerSepNorm:
        r"""Builds the model from a :class:`GraphormerConfig` or a plain
        mapping (a YAML section, or :attr:`config` of another model),
        rejecting unknown keys with the valid ones (a :class:`ValueError`).
        A saved :obj:`attention_buckets` (written by earlier versions) sets
        the runtime bucket count."""
        if dataclasses.is_dataclass(config):
            config = dataclasses.asdict(config)  # type: ignore[arg-type]
        valid = list(inspect.signature(cls).parameters)
        for key in config:
            if key not in valid:
                raise ValueError(unknown_option(key, valid))
        return cls(**config)

    def layout_options(self, num_buckets: Optional[int] = None
                       ) -> dict[str, int]:
        r"""The arguments of
        :func:`~graphormer_sepnorm.transforms.add_batch_layout` that prepare
        batches for this model: :obj:`num_buckets` (default: its
        :obj:`attention_buckets`; a GPU runs best with :obj:`1`) and the
        hops of the multi-hop walk."""
        hops = (self.attention_bias.multi_hop_max_dist
                if self.attention_bias.edge_encoding == 'multi_hop' else 0)
        return dict(num_buckets=num_buckets or self.attention_buckets,
                    multi_hop_max_dist=hops)

    def encode(self, data: Data, masked_atoms: Optional[Tensor] = None,
               mask_token: Optional[Tensor] = None) -> tuple[Tensor, Tensor]:
        r"""Runs the encoder; returns the final token sequence
        :obj:`[num_graphs, 1 + N, hidden_channels]` (graph token first, after
        the final norm, zeros at padding) and the real-node mask
        :obj:`[num_graphs, N]`.

        Args:
            data (Data): A batch preprocessed by :class:`AddShortestPaths`.
            masked_atoms (Tensor, optional): Boolean :obj:`[num_nodes]`: the
                atoms whose features are hidden behind :obj:`mask_token`
                (masked-atom pretraining). (default: :obj:`None`)
            mask_token (Tensor, optional): :obj:`[hidden_channels]`, the
                embedding that replaces their atom features.
                (default: :obj:`None`)
        """
        x, tokens = self._encode(data, masked_atoms, mask_token)
        return tokens.unpack(x)

    def graph_embedding(self, data: Data) -> Tensor:
        r"""The graph-token embedding :obj:`[num_graphs, hidden_channels]`
        that the prediction head reads (the representation the SepNorm paper
        analyses)."""
        x, tokens = self._encode(data)
        return x[tokens.graph_index]

    def _encode(self, data: Data, masked_atoms: Optional[Tensor] = None,
                mask_token: Optional[Tensor] = None
                ) -> tuple[Tensor, PackedTokens]:
        # The layers run on packed tokens: graphs sorted into size buckets,
        # each padded only to its own longest graph, as the batch's layout
        # (prepared with the batch) says.
        if not self.training and not torch.compiler.is_compiling():
            warn_if_stale(self, stacklevel=2)
        tokens = PackedTokens(self._layout(data))
        if tokens.max_nodes > self.max_nodes:
            raise ValueError(
                f"A graph has {tokens.max_nodes} nodes, more than the "
                f"model's max_nodes={self.max_nodes}; filter such graphs out "
                f"or build the model with a larger max_nodes")
        x = self.node_encoder(data, tokens, masked_atoms, mask_token)
        if self.graph_feature_encoder is not None:
            x = self.graph_feature_encoder(data, tokens, x)
        tokens.biases = self.attention_bias(data, tokens)
        if self.embedding_norm is not None:
            x = self.embedding_norm(x, tokens)
        x = self.input_dropout(x)
        for layer in self.layers:
            x = layer(x, tokens)
        if self.final_norm is not None:
            x = self.final_norm(x, tokens)
        return x, tokens

    def _layout(self, data: Data) -> BatchLayout:
        r"""The batch's prepared layout, or one computed here on the host
        (with a warning once on an accelerator, where it stalls the
        device)."""
        layout = getattr(data, 'layout', None)
        if layout is not None:
            return layout
        if torch.compiler.is_compiling():
            raise ValueError(
                "The batch has no 'layout', which a compiled model cannot "
                "compute (its shapes depend on the graphs' sizes): prepare "
                "the layout with GraphormerDataLoader(dataset, batch_size, "
                "layout=model.layout_options()), or add_batch_layout(batch, "
                "**model.layout_options()) before calling the compiled model")
        device = data.edge_index.device
        if device.type != 'cpu':
            warnings.warn(
                "The batch has no 'layout', so the model computes it on the "
                "host at every step, which stalls the device; prepare "
                "batches with graphormer_sepnorm.transforms.add_batch_layout"
                "(batch, **model.layout_options()) where they are built (the "
                "training, prediction and pretraining pipelines do)",
                stacklevel=3)
        return batch_layout(data, **self.layout_options()).to(device)

    def compile_regions(self, **options: Any) -> None:
        r"""Compiles, in place, the regions of the forward pass that
        hold its operations: the node encoder, the attention bias and each
        encoder layer, each with :obj:`torch.compile(**options)` (e.g.
        :obj:`dynamic=True`). The layers run the same code on the same
        shapes, so they share their compilation (SepNorm's first layer has
        its own): on the CPU, compiling the recipe's 12 layers took half the
        time of compiling the whole forward (:obj:`torch.compile(model)`),
        whose steps ran faster there. Parameters keep their names."""
        self.node_encoder.compile(**options)
        self.attention_bias.compile(**options)
        for layer in self.layers:
            layer.compile(**options)

    def forward(self, data: Data) -> Tensor:
        r"""Returns the predictions :obj:`[num_graphs, out_channels]`."""
        return self.head_output(self.graph_embedding(data))

    def head_output(self, graph_token: Tensor) -> Tensor:
        r"""The prediction head on graph-token embeddings
        :obj:`[num_graphs, hidden_channels]`: Graphormer's dense layer, GELU
        and layer norm, then the output layer."""
        h = self.head_norm(F.gelu(self.head_transform(graph_token)))
        return self.head(h)

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}(layers={len(self.layers)}, '
                f"hidden={self.hidden_channels}, "
                f"norm={self.config['norm']!r}, "
                f"pre_norm={self.config['pre_norm']}, "
                f"out={self.out_channels})")



#: The options of :class:`GraphormerSepNorm` as a dataclass, read from its
#: signature: the fields of :attr:`GraphormerSepNorm.config`.
GraphormerConfig = options_dataclass('GraphormerConfig', GraphormerSepNorm)
