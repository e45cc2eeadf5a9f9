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
:mod:`graphormer_sepnorm.convert` for how the weights map, and
:mod:`graphormer_sepnorm.cli.convert` for the command line (also
``graphormer-sepnorm convert-hf``).
"""
import sys

from graphormer_sepnorm.cli.convert import convert_main, convert_parser

__all__ = ['convert_parser', 'convert_main']

if __name__ == '__main__':
    sys.exit(convert_main())
