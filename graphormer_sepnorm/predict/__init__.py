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
    embeddings = predictor.embed(['CCO', 'c1ccccc1O'])  # [2, width]
    # A model trained with data.feature_columns also reads those columns:
    predictor.feature_columns  # e.g. ['assay', 'mw']
    predictor.predict(['CCO'], features={'assay': [0.3], 'mw': [46.07]})

One file per job, in layers: a module imports only modules of its own layer
or of an earlier layer in this list, and never one that imports it, not even
inside a function (``tests/predict/test_layers.py`` checks both):

* base: :mod:`~.prediction` (:class:`Prediction`, :class:`PredictionError`,
  what a chunk returns, the output column names), :mod:`~.molecules`
  (SMILES or SDF records, with their feature-column values for a model
  that reads some, featurized a chunk at a time), :mod:`~.feature_columns`
  (those values from a file's columns or the :obj:`features` argument),
  :mod:`~.workers`
  (chunks mapped in order over worker processes, knowing nothing of models
  or files), :mod:`~.device_errors` (a failure of the accelerator told from
  one of the molecules of a batch);
* files: :mod:`~.readers` (CSV, TSV, SMILES and SDF inputs, gzipped or not,
  stdin), :mod:`~.writers` (CSV outputs written chunk by chunk, resumable),
  :mod:`~.run_record` (the record beside each output that resume and merge
  check), :mod:`~.shards` (:class:`Shard`), :mod:`~.top_k` (the K best rows
  in bounded memory, and their file), :mod:`~.embeddings` (embedding files),
  :mod:`~.file_run` (one file's run: :class:`PredictFileOptions`, the
  summary, reading, predicting and writing its chunks), :mod:`~.pipeline`
  (:func:`predict_file`, file to file with progress, resume, shards, top-K
  and embeddings, for any predictor), :mod:`~.merge`
  (:func:`merge_predictions`);
* models: :mod:`~.running` (what every predictor does with molecules:
  featurizing, batching, predictions and embeddings, and
  :meth:`Predictor.predict_file` through :mod:`~.pipeline`),
  :mod:`~.ensemble` (:class:`EnsemblePredictor`, several models averaged,
  with their spread, the :obj:`<column>_std` columns);
* :mod:`~.predictor` (:class:`Predictor`: a model and its card, loaded from
  a checkpoint, several (an ensemble) or a bundled model, whose member
  files are checked against the registry first).

The command lines are :mod:`graphormer_sepnorm.cli.predict`
(:obj:`scripts/predict.py`) and :mod:`graphormer_sepnorm.cli.merge`
(:obj:`scripts/merge_predictions.py`).
"""
from ..lazy_imports import lazy_getattr

__all__ = ['Predictor', 'EnsemblePredictor', 'PredictorBase', 'Prediction',
           'PredictionError',
           'PredictionSummary', 'PredictFileOptions', 'predict_file',
           'merge_predictions', 'Shard',
           'MoleculeReader', 'INPUT_FORMATS', 'collate', 'prediction_columns',
           'PREDICTION_COLUMN', 'ERROR_COLUMN', 'STD_SUFFIX']

#: Where each public name lives, loaded on first use (PEP 562): the
#: command's help reads the input formats without torch or RDKit.
_HOMES = {
    'collate': '..data.molecule_graphs',
    'merge_predictions': '.merge',
    'EnsemblePredictor': '.ensemble',
    **dict.fromkeys(('PredictFileOptions', 'PredictionSummary',
                     'predict_file'), '.pipeline'),
    **dict.fromkeys(('ERROR_COLUMN', 'PREDICTION_COLUMN', 'STD_SUFFIX',
                     'Prediction', 'PredictionError', 'prediction_columns'),
                    '.prediction'),
    'Predictor': '.predictor',
    **dict.fromkeys(('INPUT_FORMATS', 'MoleculeReader'), '.readers'),
    'PredictorBase': '.running',
    'Shard': '.shards',
}

__getattr__ = lazy_getattr(__name__, _HOMES)
