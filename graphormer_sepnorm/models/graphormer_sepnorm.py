from __future__ import annotations

import dataclasses
import difflib
import inspect
import warnings
from typing import TYPE_CHECKING, Any, Mapping, Optional, Union

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import LayerNorm, Linear, Module, ModuleList

from ..nn.batch_norm_statistics import mark_statistics_current, warn_if_stale
from ..nn.dropout import Dropout
from ..nn.encoder_layer import GraphormerLayer
from ..nn.graph_attention_bias import GraphAttentionBias
from ..nn.graph_features import GraphFeatureEncoder
from ..nn.node_encoder import GraphormerNodeEncoder
from ..nn.packed_tokens import PackedTokens
from ..nn.sep_norm import SepNorm, ShareNorm
from ..transforms.batch_layout import BatchLayout, batch_layout
from .config import GraphormerConfig, takes_config

if TYPE_CHECKING:  # pragma: no cover
    from torch_geometric.data import Data


@takes_config(GraphormerConfig)
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
        attention_buckets (int, optional): How many buckets of graphs of
            similar size :meth:`layout_options` lays batches out in by
            default, each padded only to its own largest graph (same
            result, less padding; see
            :class:`~graphormer_sepnorm.nn.PackedTokens`). A runtime
            setting, not an option of :attr:`config`: on a GPU the data
            pipeline uses one bucket. (default: :obj:`4`)
    """
    def __init__(self, *args: Any, attention_buckets: int = 4,
                 **kwargs: Any) -> None:
        # The arguments are the fields of GraphormerConfig (the signature
        # @takes_config gives this method).
        super().__init__()
        c = GraphormerConfig(*args, **kwargs)
        self.config: dict[str, Any] = dataclasses.asdict(c)
        self.out_channels = c.out_channels
        self.hidden_channels = c.hidden_channels
        self.max_nodes = c.max_nodes
        self.attention_buckets = attention_buckets

        self.node_encoder = GraphormerNodeEncoder(
            c.atom_vocab_sizes, c.hidden_channels, c.max_degree, c.directed)
        self.attention_bias = GraphAttentionBias(
            c.num_heads, c.bond_vocab_sizes, c.edge_encoding,
            c.multi_hop_max_dist, c.max_distance, c.max_attention_distance)
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
    def from_config(cls, config: Union[GraphormerConfig, Mapping[str, Any]]
                    ) -> 'GraphormerSepNorm':
        r"""Builds the model from a :class:`GraphormerConfig` or a plain
        mapping (a YAML section, or :attr:`config` of another model),
        rejecting unknown keys with the valid ones. A saved
        :obj:`attention_buckets` (written by earlier versions) sets the
        runtime bucket count."""
        if isinstance(config, GraphormerConfig):
            config = dataclasses.asdict(config)
        valid = list(inspect.signature(cls.__init__).parameters)[1:]
        for key in config:
            if key not in valid:
                hint = difflib.get_close_matches(str(key), valid, n=1)
                did_you_mean = f" Did you mean '{hint[0]}'?" if hint else ""
                raise ValueError(
                    f"Unknown model option '{key}'.{did_you_mean} Valid "
                    f"options: {', '.join(valid)}")
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

