r"""Predict molecular properties from SMILES with a trained checkpoint.

.. code-block:: python

    from graphormer_sepnorm.predict import Predictor

    predictor = Predictor.from_checkpoint('runs/zinc/model.safetensors')
    # or Predictor.from_bundled('zinc') once a bundled model is installed
    for p in predictor.predict(['CCO', 'c1ccccc1O', 'not a smiles']):
        print(p.smiles, p.value, p.error)
    predictor.predict_csv('molecules.csv', 'predictions.csv',
                          smiles_column='smiles')

Every input row gets one :class:`Prediction`, in input order: its value
(regression: the property in the units of the training targets, i.e. the
model output times :obj:`target_std` plus :obj:`target_mean`, per target;
binary: the probability of the positive class, the sigmoid of the model's
logit), one per target for models trained on several, or an
error message (unparsable SMILES, atoms the featurizer cannot encode, more
atoms than the model's :obj:`max_nodes`). Only problems with the call itself
(a missing or incompatible checkpoint, an unreadable CSV, a missing column)
raise, as :class:`PredictionError` or
:class:`~graphormer_sepnorm.checkpoint.CheckpointError`.

Speed. Molecules are featurized straight into NumPy arrays, their shortest
paths computed with the same function as
:class:`~graphormer_sepnorm.transforms.AddShortestPaths` (so the model sees
exactly the graphs it was trained on), sorted by size within chunks so that
each batch is padded little (the model pads every batch to its largest graph
and attention costs grow with the square of that size), batched without
:class:`~torch_geometric.data.Data` objects, and run under
:func:`torch.inference_mode`. On a CPU with several cores, large inputs are
split into chunks predicted end to end by worker processes with one thread
each (featurization is Python-bound and a 12-layer model with 80 channels
uses a second thread poorly, so data parallelism uses the cores best).
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import csv
import gzip
import math
import multiprocessing
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence, Union

import numpy as np
import torch
from torch_geometric.data import Batch

from .checkpoint import CheckpointError, ModelCard, load_model
from .data.featurize import (FeaturizationError, _zinc_graph_arrays,
                             get_featurizer)
from .models import GraphormerSepNorm
from .transforms.shortest_paths import shortest_paths

__all__ = ['Prediction', 'Predictor', 'PredictionError', 'read_smiles_csv',
           'write_predictions_csv', 'PREDICTION_COLUMN', 'ERROR_COLUMN']

PathLike = Union[str, Path]

#: Output column holding the prediction (regression value or probability).
PREDICTION_COLUMN = 'prediction'
#: Output column holding the per-row error message (empty when predicted).
ERROR_COLUMN = 'error'

# Molecules per chunk handed to a worker: each chunk is sorted by size on
# its own, so chunks should hold several batches.
_MIN_CHUNK = 256
_MAX_CHUNK = 2048
# Smaller batches run on one thread (see _single_thread).
_MIN_MULTITHREAD_BATCH = 16
# Below this many molecules per worker, forking workers costs more than it
# saves.
_MIN_MOLECULES_PER_WORKER = 256


class PredictionError(ValueError):
    r"""A problem with a prediction call as a whole (not with one molecule):
    an unreadable CSV, a missing column, a bad argument."""


@dataclass(frozen=True)
class Prediction:
    r"""The prediction for one input molecule.

    Attributes:
        smiles (str): The input SMILES, as given.
        value (float, optional): Regression: the property in the units of the
            training targets; binary: the probability of the positive class.
            A tuple of floats for models with several outputs. :obj:`None`
            if the molecule could not be predicted.
        error (str, optional): Why the molecule could not be predicted;
            :obj:`None` if it was.
    """
    smiles: str
    value: Optional[Union[float, tuple[float, ...]]] = None
    error: Optional[str] = None

    @property
    def ok(self) -> bool:
        r""":obj:`True` if the molecule was predicted."""
        return self.error is None

    def as_dict(self, columns: Sequence[str] = (PREDICTION_COLUMN, )
                ) -> dict[str, Any]:
        r"""``{'smiles': ..., <column>: value or None, ..., 'error': message
        or None}``, one key per output of the model named in
        :obj:`columns` (:attr:`Predictor.output_columns`; default:
        :obj:`("prediction",)`, which holds the value as it is)."""
        values = (self.value if len(columns) > 1 and self.value is not None
                  else (self.value, ) * len(columns))
        return {'smiles': self.smiles, **dict(zip(columns, values)),
                ERROR_COLUMN: self.error}


# A featurized molecule ready for batching: x [n, F], edge_index [2, E],
# edge_attr [E] or [E, F], spd and path_next flat int16 [n * n].
_Graph = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class Predictor:
    r"""Predicts a trained :class:`~graphormer_sepnorm.GraphormerSepNorm`
    from SMILES strings.

    Build it with :meth:`from_checkpoint` or :meth:`from_bundled` (or
    directly from a model in evaluation mode and its
    :class:`~graphormer_sepnorm.checkpoint.ModelCard`).

    Args:
        model (GraphormerSepNorm): The model.
        card (ModelCard): Its featurizer, task and target normalization.
        device (str or torch.device, optional): Where the model runs.
            (default: :obj:`"cpu"`)
        source (str, optional): Where the model came from, for messages.
    """
    def __init__(self, model: GraphormerSepNorm, card: ModelCard,
                 device: Union[str, torch.device] = 'cpu',
                 source: Optional[str] = None) -> None:
        if card.task not in ('regression', 'binary'):
            raise CheckpointError(
                f"{source or 'model'}: unknown task {card.task!r} in its "
                f"model card (expected 'regression' or 'binary')")
        try:
            self.featurize = get_featurizer(card.featurizer)
        except ValueError as error:
            raise CheckpointError(f"{source or 'model'}: {error}") from None
        try:
            self.device = torch.device(device)
            self.model = model.to(self.device).eval()
            # Batches here are already sorted by size: buckets inside the
            # model would only add copies (same outputs either way).
            self.model.attention_buckets = 1
        except (RuntimeError, AssertionError, ValueError) as error:
            raise PredictionError(
                f"Cannot use device {str(device)!r}: "
                f"{str(error).splitlines()[0]}") from None
        self.card = card
        self.source = source
        self.featurizer_name = card.featurizer.strip().lower()
        self.max_nodes = int(model.max_nodes)
        self.task = card.task
        # One value per target (a float for single-target models).
        self.target_mean = torch.tensor(card.target_mean,
                                        dtype=torch.float64).view(-1)
        self.target_std = torch.tensor(card.target_std,
                                       dtype=torch.float64).view(-1)
        #: The output columns: the training CSV's target names, or
        #: :obj:`"prediction"` for models without named targets.
        self.output_columns = (list(card.target_names)
                               or [PREDICTION_COLUMN])

    # Construction ###########################################################

    @classmethod
    def from_checkpoint(cls, path: PathLike,
                        device: Union[str, torch.device] = 'cpu'
                        ) -> 'Predictor':
        r"""Loads a checkpoint written by
        :func:`~graphormer_sepnorm.checkpoint.save_model` (safetensors; no
        pickle involved): the :obj:`model.safetensors` file, or the training
        run directory holding it.

        Raises:
            CheckpointError: If the file is missing, not safetensors, not a
                graphormer-sepnorm checkpoint, or does not fit this version.
        """
        if (Path(path) / 'model.safetensors').is_file():  # A run directory.
            path = Path(path) / 'model.safetensors'
        model, card = load_model(path, map_location='cpu')
        return cls(model, card, device=device, source=str(path))

    @classmethod
    def from_bundled(cls, name: str, device: Union[str, torch.device] = 'cpu',
                     directory: Optional[PathLike] = None) -> 'Predictor':
        r"""Loads a bundled model, :obj:`"zinc"` (penalized logP) or
        :obj:`"molhiv"` (probability of HIV activity); see
        :mod:`graphormer_sepnorm.bundled`.

        Raises:
            ValueError: If :obj:`name` is not a registered model.
            BundledModelNotInstalled: If its checkpoint is not installed (the
                message says how to train one).
        """
        from .bundled import bundled_model_path, get_bundled_model

        entry = get_bundled_model(name)
        path = bundled_model_path(entry.name, directory)
        predictor = cls.from_checkpoint(path, device=device)
        card = predictor.card
        if (predictor.featurizer_name != entry.featurizer
                or card.task != entry.task):
            raise CheckpointError(
                f"{path} is installed as the bundled '{entry.name}' model but "
                f"its card says featurizer={card.featurizer!r}, "
                f"task={card.task!r} (expected {entry.featurizer!r}, "
                f"{entry.task!r}); replace it with the right checkpoint")
        return predictor

    @property
    def value_description(self) -> str:
        r"""What :attr:`Prediction.value` means for this model."""
        if self.task == 'binary':
            return 'probability of the positive class'
        return 'regression value in the units of the training targets'

    # Prediction #############################################################

    def predict(self, smiles: Sequence[str], batch_size: int = 128,
                num_workers: Optional[int] = None) -> list[Prediction]:
        r"""Predicts every SMILES of :obj:`smiles`; returns one
        :class:`Prediction` per input, in input order.

        Args:
            smiles (Sequence[str]): The molecules.
            batch_size (int, optional): Molecules per forward pass.
                (default: :obj:`128`)
            num_workers (int, optional): Worker processes. :obj:`0` predicts in
                this process; :obj:`None` picks one per available core for
                large inputs on CPU (on Linux) and :obj:`0` otherwise.
                (default: :obj:`None`)
        """
        if isinstance(smiles, str):
            raise PredictionError(
                "predict() takes a sequence of SMILES strings; wrap a single "
                "SMILES in a list: predict(['CCO'])")
        smiles = list(smiles)
        if not isinstance(batch_size, int) or batch_size < 1:
            raise PredictionError(f"batch_size must be a positive integer, "
                                  f"got {batch_size!r}")
        workers = self._num_workers(len(smiles), num_workers)
        if workers == 0:
            outputs = self._predict_chunk(smiles, batch_size)
        else:
            outputs = self._predict_in_workers(smiles, batch_size, workers)
        return [Prediction(s, value, error)
                for s, (value, error) in zip(smiles, outputs)]

    def predict_table(self, smiles: Sequence[str], batch_size: int = 128,
                      num_workers: Optional[int] = None
                      ) -> list[dict[str, Any]]:
        r"""Like :meth:`predict`, as a list of dicts with keys
        :obj:`smiles`, one per :attr:`output_columns` and :obj:`error`."""
        return [p.as_dict(self.output_columns)
                for p in self.predict(smiles, batch_size, num_workers)]

    def predict_csv(self, input_path: PathLike, output_path: PathLike,
                    smiles_column: str = 'smiles', batch_size: int = 128,
                    num_workers: Optional[int] = None) -> list[Prediction]:
        r"""Reads the SMILES of column :obj:`smiles_column` of a CSV file
        (optionally gzipped), predicts them and writes a CSV with the input
        columns plus :attr:`output_columns` and :obj:`error`, one row per
        input row, in input order. Returns the predictions.

        Raises:
            PredictionError: If the input is missing, unreadable or has no
                column :obj:`smiles_column`, or the output cannot be written.
        """
        fieldnames, rows = read_smiles_csv(input_path, smiles_column)
        predictions = self.predict([row[smiles_column] for row in rows],
                                   batch_size, num_workers)
        write_predictions_csv(output_path, predictions, rows, fieldnames,
                              self.output_columns)
        return predictions

    # Internals ##############################################################

    def _num_workers(self, num_molecules: int,
                     num_workers: Optional[int]) -> int:
        if num_workers is not None:
            if not isinstance(num_workers, int) or num_workers < 0:
                raise PredictionError(f"num_workers must be a non-negative "
                                      f"integer, got {num_workers!r}")
            if num_workers > 0 and self.device.type != 'cpu':
                raise PredictionError(
                    "Worker processes run the model on CPU; use "
                    "num_workers=0 with a GPU")
            return min(num_workers, num_molecules)
        if (self.device.type != 'cpu'
                or 'fork' not in multiprocessing.get_all_start_methods()):
            return 0
        cores = _available_cores()
        if cores < 2:
            return 0
        return min(cores, num_molecules // _MIN_MOLECULES_PER_WORKER) \
            if num_molecules >= 2 * _MIN_MOLECULES_PER_WORKER else 0

    def _predict_in_workers(self, smiles: list[str], batch_size: int,
                            workers: int) -> list[tuple[Any, Optional[str]]]:
        # Chunks of molecules of similar size (ordered by an atom count read
        # off the SMILES text; each chunk is then sorted by its real sizes),
        # so that batches stay tight although no process sees all graphs.
        # About four chunks per worker balance the load.
        order = sorted(range(len(smiles)),
                       key=lambda i: _approximate_atoms(smiles[i]))
        size = max(math.ceil(len(smiles) / (4 * workers)),
                   min(_MIN_CHUNK, math.ceil(len(smiles) / workers)))
        size = min(_MAX_CHUNK, size)
        chunks = [[smiles[i] for i in order[start:start + size]]
                  for start in range(0, len(order), size)]
        # Load the Numba-compiled code (shortest paths, the model's path
        # walk) once here rather than in every worker: about 0.7 s each.
        self.predict(['CC'], num_workers=0)
        global _WORKER_PREDICTOR
        _WORKER_PREDICTOR = self  # Inherited by the forked workers.
        try:
            with concurrent.futures.ProcessPoolExecutor(
                    max_workers=workers,
                    mp_context=multiprocessing.get_context('fork'),
                    initializer=_init_worker) as pool:
                results = pool.map(_worker_predict_chunk, chunks,
                                   [batch_size] * len(chunks))
                outputs: list[tuple[Any, Optional[str]]] = \
                    [(None, None)] * len(smiles)
                position = iter(order)
                for chunk_outputs in results:
                    for output in chunk_outputs:
                        outputs[next(position)] = output
        except concurrent.futures.process.BrokenProcessPool as error:
            raise PredictionError(
                f"A prediction worker process died ({error}); retry with "
                f"num_workers=0 (--num-workers 0) to predict in one process "
                f"and see the error") from None
        finally:
            _WORKER_PREDICTOR = None
        return outputs

    def _predict_chunk(self, smiles: Sequence[str], batch_size: int
                       ) -> list[tuple[Any, Optional[str]]]:
        r"""Featurizes, sorts by size, batches and predicts :obj:`smiles`;
        returns :obj:`(value, error)` per molecule in input order."""
        outputs: list[tuple[Any, Optional[str]]] = [(None, None)] * len(smiles)
        graphs: list[_Graph] = []
        positions: list[int] = []
        for i, s in enumerate(smiles):
            try:
                graphs.append(self._prepare(s))
                positions.append(i)
            except FeaturizationError as error:
                outputs[i] = (None, str(error))
            except Exception as error:  # One bad molecule never stops the rest.
                outputs[i] = (None, f"SMILES {s!r} could not be featurized "
                                    f"({type(error).__name__}: {error})")
        # Stable sort by size: each batch holds molecules of similar size.
        order = sorted(range(len(graphs)), key=lambda k: graphs[k][0].shape[0])
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                members = order[start:start + batch_size]
                for k, output in zip(members, self._run_batch(
                        [graphs[k] for k in members])):
                    outputs[positions[k]] = output
        return outputs

    def _prepare(self, smiles: str) -> _Graph:
        if self.featurizer_name == 'zinc':
            x, edge_index, edge_attr = _zinc_graph_arrays(smiles,
                                                          self.max_nodes)
            x = x.reshape(-1, 1)
        else:
            data = self.featurize(smiles, max_nodes=self.max_nodes)
            x = data.x.numpy()
            edge_index = data.edge_index.numpy()
            edge_attr = data.edge_attr.numpy()
        spd, path_next = shortest_paths(edge_index, x.shape[0])
        return x, edge_index, edge_attr, spd.reshape(-1), path_next.reshape(-1)

    def _run_batch(self, graphs: list[_Graph]
                   ) -> list[tuple[Any, Optional[str]]]:
        try:
            batch = collate(graphs).to(self.device)
            if len(graphs) < _MIN_MULTITHREAD_BATCH and \
                    self.device.type == 'cpu':
                with _single_thread():
                    out = self.model(batch)
            else:
                out = self.model(batch)
        except (ValueError, IndexError, RuntimeError) as error:
            if len(graphs) == 1:
                message = str(error).splitlines()[0] if str(error) else \
                    type(error).__name__
                return [(None, f"The model could not predict this molecule "
                               f"({message})")]
            # Find the molecule(s) at fault; the others still get values.
            return [output for graph in graphs
                    for output in self._run_batch([graph])]
        return [(value, None) for value in self._postprocess(out)]

    def _postprocess(self, out: torch.Tensor) -> list[Any]:
        out = out.detach().to('cpu', torch.float64)
        if self.task == 'binary':
            out = torch.sigmoid(out)
        else:
            out = out * self.target_std + self.target_mean
        if out.size(1) == 1:
            return out.view(-1).tolist()
        return [tuple(row) for row in out.tolist()]


def collate(graphs: Sequence[_Graph]) -> Batch:
    r"""Batches prepared graphs into the
    :class:`~torch_geometric.data.Batch` that
    :meth:`Batch.from_data_list` builds from the same graphs after
    :class:`~graphormer_sepnorm.transforms.AddShortestPaths` (attributes
    :obj:`x`, :obj:`edge_index`, :obj:`edge_attr`, :obj:`spd`,
    :obj:`path_next`, :obj:`batch`, :obj:`ptr`), without building
    :class:`~torch_geometric.data.Data` objects."""
    sizes = np.fromiter((g[0].shape[0] for g in graphs), dtype=np.int64,
                        count=len(graphs))
    ptr = np.zeros(len(graphs) + 1, dtype=np.int64)
    np.cumsum(sizes, out=ptr[1:])
    edge_index = np.concatenate(
        [g[1] + offset for g, offset in zip(graphs, ptr[:-1])], axis=1)
    return Batch(
        x=torch.from_numpy(np.concatenate([g[0] for g in graphs])),
        edge_index=torch.from_numpy(edge_index),
        edge_attr=torch.from_numpy(np.concatenate([g[2] for g in graphs])),
        spd=torch.from_numpy(np.concatenate([g[3] for g in graphs])),
        path_next=torch.from_numpy(np.concatenate([g[4] for g in graphs])),
        batch=torch.from_numpy(np.repeat(np.arange(len(graphs)), sizes)),
        ptr=torch.from_numpy(ptr))


@contextlib.contextmanager
def _single_thread():
    r"""Runs the block with one intra-op thread: on a handful of molecules
    more threads only add synchronization, which costs 10x or more when the
    cores are shared with other processes."""
    threads = torch.get_num_threads()
    if threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


# Worker processes ############################################################

_WORKER_PREDICTOR: Optional[Predictor] = None


def _init_worker() -> None:
    # One thread per worker: the workers themselves use the cores.
    torch.set_num_threads(1)


def _worker_predict_chunk(smiles: list[str], batch_size: int
                          ) -> list[tuple[Any, Optional[str]]]:
    assert _WORKER_PREDICTOR is not None, 'worker started without a model'
    return _WORKER_PREDICTOR._predict_chunk(smiles, batch_size)


_ATOM_TOKEN = re.compile(r'\[[^\]]*\]|Cl|Br|[BCNOPSFI]|[bcnops]')


def _approximate_atoms(smiles: Any) -> int:
    r"""Heavy atoms of a SMILES string, counted from its text (bracket atoms
    and organic-subset symbols); only used to order molecules by size."""
    if not isinstance(smiles, str):
        return 0
    return len(_ATOM_TOKEN.findall(smiles))


def _available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


# CSV #########################################################################


def _open_text(path: Path, mode: str):
    if path.suffix == '.gz':
        return gzip.open(path, mode + 't', newline='', encoding='utf-8')
    return open(path, mode, newline='', encoding='utf-8')


def read_smiles_csv(path: PathLike, smiles_column: str = 'smiles'
                    ) -> tuple[list[str], list[dict[str, str]]]:
    r"""Reads a CSV file (``.csv`` or ``.csv.gz``, with a header row) and
    returns its column names and rows (dicts); every row has a value for
    :obj:`smiles_column` (empty if the row is short).

    Raises:
        PredictionError: If the file is missing or unreadable, or has no
            column :obj:`smiles_column` (the message lists the columns).
    """
    path = Path(path)
    if not path.is_file():
        raise PredictionError(f"Input file {path} does not exist" + (
            " (it is a directory)" if path.is_dir() else ""))
    try:
        with _open_text(path, 'r') as f:
            reader = csv.DictReader(f)
            fieldnames = list(reader.fieldnames or [])
            if smiles_column not in fieldnames:
                present = ', '.join(repr(c) for c in fieldnames) or 'none'
                raise PredictionError(
                    f"{path} has no column {smiles_column!r} (columns "
                    f"present: {present}); name the SMILES column with "
                    f"--smiles-column / smiles_column")
            rows = []
            for row in reader:
                row.pop(None, None)  # Cells beyond the header.
                if row.get(smiles_column) is None:
                    row[smiles_column] = ''
                rows.append(row)
    except PredictionError:
        raise
    except (OSError, UnicodeDecodeError, csv.Error, EOFError) as error:
        raise PredictionError(f"Cannot read {path} as a CSV file with a "
                              f"header row ({error})") from None
    return fieldnames, rows


def write_predictions_csv(path: PathLike, predictions: Sequence[Prediction],
                          rows: Optional[Iterable[dict[str, Any]]] = None,
                          fieldnames: Optional[Sequence[str]] = None,
                          columns: Sequence[str] = (PREDICTION_COLUMN, )
                          ) -> Path:
    r"""Writes one CSV row per prediction, in order: the input row's columns
    (or just :obj:`smiles` when :obj:`rows` is :obj:`None`), then the output
    :obj:`columns` (:attr:`Predictor.output_columns`, empty on error) and
    :obj:`error` (empty on success). Input columns of the same names are
    replaced (as chemprop writes predictions into the target columns)."""
    path = Path(path)
    if rows is None:
        rows = [{'smiles': p.smiles} for p in predictions]
        fieldnames = ['smiles']
    names = [c for c in (fieldnames or [])
             if c not in (*columns, ERROR_COLUMN)]
    names += [*columns, ERROR_COLUMN]
    try:
        if path.parent != Path(''):
            path.parent.mkdir(parents=True, exist_ok=True)
        with _open_text(path, 'w') as f:
            writer = csv.DictWriter(f, fieldnames=names, extrasaction='ignore')
            writer.writeheader()
            for row, p in zip(rows, predictions):
                out = dict(row)
                values = p.as_dict(columns)
                out.update({c: _format_value(values[c]) for c in columns})
                out[ERROR_COLUMN] = p.error or ''
                writer.writerow(out)
    except OSError as error:
        raise PredictionError(f"Cannot write {path} ({error})") from None
    return path


def _format_value(value: Any) -> str:
    if value is None:
        return ''
    if isinstance(value, tuple):
        return ' '.join(repr(float(v)) for v in value)
    return repr(float(value))
