r"""The command line of :obj:`scripts/convert_hf.py` (``graphormer-sepnorm
convert-hf``): a Hugging Face Graphormer directory in, a graphormer-sepnorm
checkpoint out (:func:`~graphormer_sepnorm.convert.convert_graphormer`,
optionally :func:`~graphormer_sepnorm.convert.to_sepnorm`)."""
from __future__ import annotations

import argparse
from typing import Optional, Sequence, Union

from .options import fail

__all__ = ['convert_parser', 'convert_main']

DESCRIPTION = (
    'Convert a Hugging Face Graphormer (a directory written by\n'
    '``save_pretrained``: ``GraphormerForGraphClassification`` or\n'
    '``GraphormerModel``) into a graphormer-sepnorm checkpoint.')


def _spatial_pos_max(text: str) -> Union[str, int, None]:
    if text == 'config':
        return text
    if text.lower() == 'none':
        return None
    return int(text)


def convert_parser(prog: Optional[str] = None) -> argparse.ArgumentParser:
    r"""The parser of :obj:`scripts/convert_hf.py`; :obj:`prog` names the
    program in the usage line (default: the running script's name)."""
    parser = argparse.ArgumentParser(
        prog=prog, description=DESCRIPTION,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument('--input', required=True,
                        help='Hugging Face model directory (save_pretrained)')
    parser.add_argument('--output', required=True,
                        help='checkpoint to write (.safetensors)')
    parser.add_argument('--featurizer', default='ogb', choices=['ogb', 'zinc'],
                        help='SMILES featurizer of the data; also gives the '
                        'default vocabulary sizes')
    parser.add_argument('--task', required=True,
                        choices=['binary', 'regression'],
                        help="'binary' (outputs are logits) or 'regression'")
    parser.add_argument('--atom-vocab-sizes', type=int, nargs='+',
                        help='values per node-feature column (default: the '
                        "featurizer's)")
    parser.add_argument('--bond-vocab-sizes', type=int, nargs='+',
                        help='values per edge-feature column (default: the '
                        "featurizer's)")
    parser.add_argument('--spatial-pos-max', type=_spatial_pos_max,
                        default='config',
                        help="collator's spatial_pos_max: node pairs with "
                        "distance + 1 >= it do not attend; 'config' takes the "
                        "model config's value, 'none' masks nothing "
                        "(GraphormerDataCollator's default is 20)")
    parser.add_argument('--out-channels', type=int,
                        help="outputs of the new model; a value other than "
                        "the reference's num_classes gets a fresh last layer")
    parser.add_argument('--directed', action='store_true',
                        help='separate in-/out-degree tables (default: '
                        'summed, exact for undirected graphs)')
    parser.add_argument('--sepnorm', action='store_true',
                        help='write a SepNorm model initialised from the '
                        'converted weights (for fine-tuning)')
    parser.add_argument('--graph-token-norm', default='batch',
                        choices=['batch', 'layer'],
                        help='with --sepnorm: norm of the graph token')
    parser.add_argument('--node-token-norm', default='layer',
                        choices=['batch', 'layer'],
                        help='with --sepnorm: norm of the node tokens')
    parser.add_argument('--sepnorm-positions', default='all',
                        choices=['all', 'blocks', 'final'],
                        help='with --sepnorm: which norms become SepNorm')
    parser.add_argument('--target-mean', type=float, default=0.0,
                        help='regression: targets were (y - mean) / std')
    parser.add_argument('--target-std', type=float, default=1.0,
                        help='regression: see --target-mean')
    parser.add_argument('--dataset', default='',
                        help='name of the training data, kept in the card')
    parser.add_argument('--no-strict', dest='strict', action='store_false',
                        help='drop training-only reference options (q_noise, '
                        'layerdrop, freezing) with a warning instead of '
                        'failing')
    return parser


def convert_main(argv: Optional[Sequence[str]] = None,
                 prog: Optional[str] = None) -> int:
    r"""Runs :obj:`scripts/convert_hf.py`; returns the exit status (2 with a
    one-line message when the input cannot be converted)."""
    args = convert_parser(prog).parse_args(argv)
    from ..checkpoint import ModelCard, save_model
    from ..convert.sepnorm import to_sepnorm
    from ..convert.weights import convert_graphormer
    try:
        model = convert_graphormer(
            args.input, featurizer=args.featurizer,
            atom_vocab_sizes=args.atom_vocab_sizes,
            bond_vocab_sizes=args.bond_vocab_sizes,
            spatial_pos_max=args.spatial_pos_max,
            out_channels=args.out_channels, directed=args.directed,
            strict=args.strict)
    except (ImportError, FileNotFoundError, ValueError) as error:
        return fail(error)
    if args.sepnorm:
        model = to_sepnorm(model, args.graph_token_norm, args.node_token_norm,
                           args.sepnorm_positions)
    model = model.float()
    card = ModelCard(model_config=dict(model.config),
                     featurizer=args.featurizer, task=args.task,
                     target_mean=args.target_mean,
                     target_std=args.target_std, dataset=args.dataset,
                     extra={'converted_from': str(args.input)})
    path = save_model(args.output, model, card)
    print(f'wrote {path} ({model!r})')
    return 0
