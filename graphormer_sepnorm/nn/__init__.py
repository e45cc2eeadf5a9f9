r"""Building blocks of Graphormer with SepNorm."""
from .attention import BiasedMultiheadAttention
from .batch_norm_statistics import recalibrate_batch_norm
from .categorical_embedding import CategoricalEmbedding
from .dropout import Dropout
from .encoder_layer import GraphormerLayer
from .graph_attention_bias import GraphAttentionBias
from .graph_features import GraphFeatureEncoder
from .node_encoder import GraphormerNodeEncoder
from .packed_tokens import PackedTokens
from .sep_norm import SepNorm, ShareNorm

__all__ = [
    'BiasedMultiheadAttention', 'CategoricalEmbedding', 'Dropout',
    'GraphormerLayer', 'GraphAttentionBias', 'GraphFeatureEncoder',
    'GraphormerNodeEncoder', 'PackedTokens', 'SepNorm', 'ShareNorm',
    'recalibrate_batch_norm'
]
