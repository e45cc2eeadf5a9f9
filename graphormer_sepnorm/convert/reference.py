r"""The reference Hugging Face Graphormer: loading a saved one (the optional
:obj:`transformers`, imported on first use) and the checks of its
configuration."""
import warnings
from pathlib import Path
from typing import Any, Mapping, Union

import torch

_INSTALL_HINT = ('pip install "graphormer-sepnorm[reference]" (or pip install '
                 '"transformers>=4.41,<4.58" "Cython<3.1")')


class ConversionError(ValueError):
    r"""A reference checkpoint uses an option this package cannot reproduce,
    or does not fit the requested vocabularies."""


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
