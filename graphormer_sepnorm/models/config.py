r"""The options of :class:`~graphormer_sepnorm.GraphormerSepNorm`, written
once: :class:`GraphormerConfig` gives each its type, default and meaning.
The model's arguments, its :attr:`config`, the YAML :obj:`model` section and
the key table of ``configs/README.md`` are all read from it."""
import dataclasses
import inspect
import textwrap
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Optional, Sequence, Union

from ..nn.graph_attention_bias import EdgeEncoding
from ..nn.sep_norm import NormKind

#: The two normalization schemes by their :obj:`norm` value, with the names
#: the paper gives them: separate norms for the graph token and the nodes,
#: or one norm shared by all tokens.
NORM_NAMES = {'sep': 'SepNorm', 'share': 'ShareNorm'}


def option(default: Any, doc: str, **metadata: Any) -> Any:
    r"""A dataclass field with its default and its one-line meaning, and
    :obj:`metadata` such as the :obj:`length` of a list or the
    :obj:`range` the configuration's validation checks."""
    metadata['doc'] = doc
    if isinstance(default, list):
        return field(default_factory=default.copy, metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass
class GraphormerConfig:
    r"""Every option of :class:`~graphormer_sepnorm.GraphormerSepNorm`: what
    its :attr:`config` holds and its checkpoints save. Plain values only
    (lists, not tuples): it is written as JSON beside the weights."""
    atom_vocab_sizes: Sequence[int] = option(
        (28, ), "Number of values of each column of `x` (ZINC's 28 atom "
        "types by default).")
    bond_vocab_sizes: Optional[Sequence[int]] = option(
        (4, ), 'Number of values of each column of `edge_attr`; None for '
        'graphs without edge features.')
    out_channels: int = option(1, 'Outputs per graph.')
    num_layers: int = option(12, 'Transformer blocks.', range='> 0')
    hidden_channels: int = option(80, 'Token (embedding) size.', range='> 0')
    ffn_channels: int = option(80, 'Feed-forward hidden size.', range='> 0')
    num_heads: int = option(8, 'Attention heads.', range='> 0')
    dropout: float = option(
        0.0, 'Dropout on the input tokens and on each residual branch.',
        range='[0, 1)')
    attention_dropout: float = option(0.1, 'Dropout on attention weights.',
        range='[0, 1)')
    activation_dropout: float = option(
        0.1, 'Dropout after the GELU of the feed-forward networks.',
        range='[0, 1)')
    pre_norm: bool = option(True, 'Pre-LN blocks if true, post-LN otherwise.')
    final_norm: bool = option(
        True, 'With pre-LN, normalize the last block output.')
    embedding_norm: bool = option(
        False, 'Normalize the input tokens (encoder_normalize_before).')
    norm: Literal[tuple(NORM_NAMES)] = option(
        'sep', 'SepNorm (`sep`) or one shared LayerNorm (`share`).')
    graph_token_norm: NormKind = option('batch',
                                        "SepNorm's graph-token norm.")
    node_token_norm: NormKind = option('layer', "SepNorm's node-token norm.")
    sepnorm_positions: Literal['all', 'blocks', 'final'] = option(
        'all', 'Which norms are SepNorm when norm=sep (`blocks` = all but '
        'the final norm).')
    edge_encoding: EdgeEncoding = option('multi_hop',
                                         "Graphormer's edge encoding.")
    multi_hop_max_dist: int = option(
        20, 'Hops of a shortest path that enter the multi-hop edge encoding.')
    max_degree: int = option(64, 'Largest degree with its own embedding.')
    max_distance: int = option(
        64, 'Largest distance with its own spatial encoding.')
    max_attention_distance: Optional[int] = option(
        None, 'If set, node pairs farther apart do not attend to each other.')
    max_nodes: int = option(512, 'Largest graph the model accepts.',
        range='> 0')
    directed: bool = option(False, 'Separate in- and out-degree embeddings.')
    graph_feature_channels: int = option(
        0, 'Molecule features per graph (`data.graph_features`) projected '
        'and added to the graph token; 0: none (the paper\'s model). '
        'Training fills it from data.molecule_features and '
        'data.feature_columns.', range='>= 0')

    def __post_init__(self) -> None:
        for name in ('atom_vocab_sizes', 'bond_vocab_sizes'):
            if getattr(self, name) is not None:
                setattr(self, name, [int(v) for v in getattr(self, name)])
        for f in dataclasses.fields(self):
            allowed = choices(f.type)
            if allowed and getattr(self, f.name) not in allowed:
                raise ValueError(
                    f"{f.name} must be one of "
                    f"{', '.join(map(repr, allowed))}, got "
                    f"{getattr(self, f.name)!r}")


def strip_optional(type_: Any) -> tuple[Any, bool]:
    r""":obj:`(X, True)` for :obj:`Optional[X]`, else :obj:`(type_, False)`."""
    args = typing.get_args(type_)
    if typing.get_origin(type_) is Union and type(None) in args:
        return next(a for a in args if a is not type(None)), True
    return type_, False


def choices(type_: Any) -> Optional[tuple]:
    r"""The values a :obj:`Literal` type, optional or not, allows;
    :obj:`None` for other types."""
    type_, _ = strip_optional(type_)
    return (typing.get_args(type_) if typing.get_origin(type_) is Literal
            else None)


def args_docstring(cls: type, indent: str = '    ') -> str:
    r"""The :obj:`Args:` section of a docstring, one entry per field of the
    dataclass :obj:`cls`."""
    lines = []
    for f in dataclasses.fields(cls):
        type_ = inspect.formatannotation(f.type)
        text = (f"{f.name} ({type_}): {f.metadata['doc'].replace('`', '``')}"
                f" (default: :obj:`{f.default!r}`)")
        lines += textwrap.wrap(text, 76 - len(indent), initial_indent=indent,
                               subsequent_indent=indent + '    ',
                               break_on_hyphens=False)
    return '\n'.join(lines)


def init_signature(cls: type, init: Any) -> inspect.Signature:
    r"""The signature of :obj:`init`, an :obj:`__init__(self, *args,
    **kwargs)` that passes :obj:`args` and :obj:`kwargs` to the dataclass
    :obj:`cls`: :obj:`self`, the fields of :obj:`cls`, then the
    keyword-only arguments of :obj:`init`."""
    own = inspect.signature(init).parameters.values()
    return inspect.Signature(
        [next(iter(own))] + list(inspect.signature(cls).parameters.values())
        + [p for p in own if p.kind == p.KEYWORD_ONLY])


def takes_config(config_cls: type) -> Callable[[type], type]:
    r"""A class decorator for a module whose :obj:`__init__(self, *args,
    **kwargs)` builds :obj:`config_cls` from its arguments: the class's
    :obj:`__init__` gets the dataclass's fields as its signature (what
    :func:`inspect.signature`, :func:`help` and :obj:`from_config` read), and
    its docstring's ``{config_args}`` becomes their :obj:`Args:` entries."""
    def decorate(cls: type) -> type:
        cls.__init__.__signature__ = init_signature(config_cls, cls.__init__)
        cls.__doc__ = cls.__doc__.replace(
            '{config_args}', args_docstring(config_cls, ' ' * 8))
        return cls
    return decorate

