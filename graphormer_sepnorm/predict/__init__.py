r"""Predict molecular properties from SMILES with a trained checkpoint, from
a handful of molecules to screening libraries of any size.

.. code-block:: python

    from graphormer_sepnorm.predict import Predictor

    predictor = Predictor.from_checkpoint('runs/zinc/model.safetensors')
    # or Predictor.from_bundled('zinc') once a bundled model is installed,
    # or an ensemble: Predictor.from_checkpoints(['runs/a', 'runs/b'])
    for p in predictor.predict(['CCO', 'c1ccccc1O', 'not a smiles']):
        print(p.smiles, p.value, p.error)
    for p in predictor.predict_iter(open('library.smi')):  # streamed
        ...
    predictor.predict_file('library.smi.gz', 'predictions.csv.gz',
                           resume=True)

One file per job:

* :mod:`~.prediction`: :class:`Prediction`, :class:`PredictionError`, the
  output column names;
* :mod:`~.predictor`: :class:`Predictor` (loading, featurizing, batching,
  the model);
* :mod:`~.ensemble`: :class:`EnsemblePredictor`, several models averaged,
  with their spread (the :obj:`<column>_std` columns);
* :mod:`~.graphs`: molecules as arrays and their batches;
* :mod:`~.workers`: chunks predicted in order by worker processes;
* :mod:`~.readers`: CSV, TSV, SMILES and SDF inputs (gzipped or not,
  stdin);
* :mod:`~.writers`: CSV outputs written chunk by chunk, resumable;
* :mod:`~.run_record`: the record beside each output that resume and merge
  check;
* :mod:`~.pipeline`: :func:`predict_file`, file to file with progress,
  resume, shards and top-K;
* :mod:`~.shards` and :mod:`~.merge`: :class:`Shard` and
  :func:`merge_predictions`;
* :mod:`~.top_k`: the K best rows in bounded memory.
"""
from .ensemble import EnsemblePredictor
from .graphs import collate
from .merge import merge_predictions
from .pipeline import PredictionSummary, predict_file
from .prediction import (ERROR_COLUMN, PREDICTION_COLUMN, STD_SUFFIX,
                         Prediction, PredictionError, prediction_columns)
from .predictor import Predictor
from .readers import INPUT_FORMATS, MoleculeReader
from .shards import Shard

__all__ = ['Predictor', 'EnsemblePredictor', 'Prediction', 'PredictionError',
           'PredictionSummary', 'predict_file', 'merge_predictions', 'Shard',
           'MoleculeReader', 'INPUT_FORMATS', 'collate', 'prediction_columns',
           'PREDICTION_COLUMN', 'ERROR_COLUMN', 'STD_SUFFIX']
