#!/usr/bin/env python
r"""Convert a Hugging Face Graphormer (a directory written by
``save_pretrained``: ``GraphormerForGraphClassification`` or
``GraphormerModel``) into a graphormer-sepnorm checkpoint.

Example::

    python scripts/convert_hf.py --input graphormer-hiv/ \
        --output model.safetensors --featurizer ogb --task binary \
        --spatial-pos-max 20

Needs the optional dependency ``transformers`` (``pip install
"graphormer-sepnorm[reference]"``) to read the directory. See
:mod:`graphormer_sepnorm.convert` for how the weights map.
"""
import argparse
import sys
from typing import Optional, Sequence

from graphormer_sepnorm.checkpoint import ModelCard, save_model
from graphormer_sepnorm.convert import convert_graphormer, to_sepnorm


def _spatial_pos_max(text: str):
    if text == 'config':
        return text
    if text.lower() == 'none':
        return None
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
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


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        model = convert_graphormer(
            args.input, featurizer=args.featurizer,
            atom_vocab_sizes=args.atom_vocab_sizes,
            bond_vocab_sizes=args.bond_vocab_sizes,
            spatial_pos_max=args.spatial_pos_max,
            out_channels=args.out_channels, directed=args.directed,
            strict=args.strict)
    except (ImportError, FileNotFoundError, ValueError) as error:
        print(f'error: {error}', file=sys.stderr)
        return 2
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


if __name__ == '__main__':
    sys.exit(main())
