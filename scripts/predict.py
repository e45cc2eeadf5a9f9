#!/usr/bin/env python
r"""Predict molecular properties from SMILES with a trained Graphormer-SepNorm
checkpoint or a bundled model, from a few molecules to screening libraries.

Examples:

    python scripts/predict.py --checkpoint runs/zinc/model.safetensors \
        --smiles "CCO" "c1ccccc1O"
    python scripts/predict.py --model zinc --input library.smi.gz \
        --output predictions.csv.gz --resume
    python scripts/predict.py --checkpoint runs/zinc --input library.sdf \
        --output part3.csv --shard 3/8
    python scripts/predict.py --checkpoint runs/zinc --input library.csv \
        --output hits.csv --top 1000 --by prediction
    python scripts/predict.py --model zinc --input library.smi \
        --output predictions.csv --embeddings embeddings.npy

See ``python scripts/predict.py --help`` and
:mod:`graphormer_sepnorm.cli.predict`.
"""
import sys
from pathlib import Path

# Runs from a checkout without installation too.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphormer_sepnorm.cli.predict import (  # noqa: E402
    predict_main, predict_parser)

__all__ = ['predict_parser', 'predict_main']

if __name__ == '__main__':
    sys.exit(predict_main())
