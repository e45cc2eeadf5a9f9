r""":class:`PredictorBase`: what every predictor, one model or an ensemble,
does with molecules, in memory (:meth:`~PredictorBase.predict`,
:meth:`~PredictorBase.embed`) or file to file
(:meth:`~PredictorBase.predict_file`, through :mod:`~.pipeline`).
"""
from __future__ import annotations

import contextlib
from itertools import islice
from pathlib import Path
from typing import (Any, Callable, Iterable, Iterator, Optional, Sequence,
                    Union)

import numpy as np
import torch

from ..checkpoint import ModelCard
from ..data.molecule_graphs import Graph, GraphBatch, collate, prepare_graph
from .device_errors import is_device_error
from .feature_columns import FeatureValues, with_features
from .molecules import SMILES, FeaturizedChunk, Molecule, featurize_molecules
from .pipeline import PredictFileOptions, PredictionSummary, predict_file
from .prediction import (ChunkResult, Prediction, PredictionError,
                         molecule_values, output_columns, prediction_columns)
from .workers import Chunk, ChunkFunction, single_thread, stream_chunks

__all__ = ['PredictorBase']

PathLike = Union[str, Path]


class PredictorBase:
    r"""What :class:`~graphormer_sepnorm.predict.Predictor` (one model) and
    :class:`~graphormer_sepnorm.predict.EnsemblePredictor` (several) share:
    everything but loading the models and naming their embeddings.

    Molecules are featurized straight into NumPy arrays, sorted by size
    within chunks of :obj:`chunk_size` consecutive molecules (so that each
    batch is padded little: attention costs grow with the square of the
    largest graph of a batch), batched without
    :class:`~torch_geometric.data.Data` objects and run under
    :func:`torch.inference_mode`, on one thread on CPU (several cores are
    used by worker processes). A chunk's predictions depend only on the
    chunk, so they are the same bit for bit however the chunks are spread
    over worker processes, shards or resumed runs.

    Every input molecule gets one :class:`Prediction`, in input order: its
    value (regression: the property in the units of the training targets,
    i.e. the model output times :obj:`target_std` plus :obj:`target_mean`;
    binary: the probability of the positive class, the sigmoid of the
    model's logit; an ensemble: the mean of its members' values, with their
    spread as :attr:`Prediction.std`) or an error message (unparsable
    SMILES, atoms the featurizer cannot encode, more atoms than the model's
    :obj:`max_nodes`, a feature-column value that is empty or not a
    number). Only problems with the call itself raise, as
    :class:`PredictionError` or
    :class:`~graphormer_sepnorm.checkpoint.CheckpointError`.

    A subclass sets the attributes below, :attr:`members` (itself for one
    model, each member giving :meth:`_run_model`), :attr:`embedding_columns`
    and :attr:`fingerprint` (SHA-256 of the model(s), recorded beside
    prediction files so that :obj:`resume` and the merge of shards can check
    they continue the same model).
    """
    device: torch.device
    card: ModelCard  # An ensemble's: its first member's.
    source: Optional[str]  # Where the model came from, for messages.
    featurizer_name: str
    # The card's molecule features (model.graph_feature_channels), or None.
    molecule_featurizer: Optional[Any]
    max_nodes: int
    num_outputs: int
    task: str
    members: Sequence[Any]
    _layout: Optional[dict[str, int]]  # None: each member lays batches out.

    # Description ############################################################

    @property
    def value_description(self) -> str:
        r"""What :attr:`Prediction.value` means for this model."""
        if self.task == 'binary':
            return 'probability of the positive class'
        return 'regression value in the units of the training targets'

    @property
    def prediction_columns(self) -> list[str]:
        r"""The output columns of the predictions, one per model output:
        the training CSV's target names, or :obj:`prediction` (see
        :func:`~graphormer_sepnorm.predict.prediction_columns`)."""
        return prediction_columns(self.num_outputs, self.card.target_names)

    @property
    def with_std(self) -> bool:
        r"""Whether predictions carry :attr:`Prediction.std`, the spread
        across the members of an ensemble."""
        return len(self.members) > 1

    @property
    def output_columns(self) -> list[str]:
        r"""The columns written for each molecule: the
        :attr:`prediction_columns`, each followed by ``<column>_std`` if
        :attr:`with_std`."""
        return output_columns(self.prediction_columns, self.with_std)

    @property
    def columns_description(self) -> str:
        r"""What the output columns hold, for messages."""
        return (f"{', '.join(self.prediction_columns)} = "
                f"{self.value_description}")

    @property
    def feature_columns(self) -> list[str]:
        r"""The CSV columns the model reads beside the SMILES as molecule
        features (it was trained with :obj:`data.feature_columns`), in
        order; empty for most models. Give their values with the
        :obj:`features` argument of :meth:`predict` and :meth:`embed`, or
        predict from a CSV or TSV file that holds them
        (:meth:`predict_file`); see
        :mod:`~graphormer_sepnorm.predict.feature_columns`."""
        featurizer = self.molecule_featurizer
        return [] if featurizer is None else list(featurizer.feature_columns)

    # Prediction #############################################################

    def predict(self, smiles: Sequence[str], batch_size: int = 128,
                num_workers: Optional[int] = None,
                chunk_size: Optional[int] = None,
                features: Optional[FeatureValues] = None
                ) -> list[Prediction]:
        r"""Predicts every SMILES of :obj:`smiles`; returns one
        :class:`Prediction` per input, in input order. See
        :meth:`predict_iter` for the arguments."""
        return list(self.predict_iter(smiles, batch_size, num_workers,
                                      chunk_size, features))

    def predict_iter(self, smiles: Iterable[str], batch_size: int = 128,
                     num_workers: Optional[int] = None,
                     chunk_size: Optional[int] = None,
                     features: Optional[FeatureValues] = None
                     ) -> Iterator[Prediction]:
        r"""Predicts the SMILES of any iterable, streamed: yields one
        :class:`Prediction` per input, in input order, as soon as its chunk
        is done. Memory depends on :obj:`chunk_size` and the number of
        workers, not on the length of the input.

        Args:
            smiles (Iterable[str]): The molecules (a list, a generator, the
                lines of a file, ...).
            batch_size (int, optional): Molecules per forward pass.
                (default: :obj:`128`)
            num_workers (int, optional): Worker processes. :obj:`0` predicts
                in this process; :obj:`None` starts one per available core on
                CPU (on Linux) once the input holds more than one chunk.
                (default: :obj:`None`)
            chunk_size (int, optional): Consecutive molecules sorted by size
                and predicted together. (default: :obj:`max(1024, 8 *
                batch_size)`)
            features (mapping or sequence, optional): For a model that
                reads :attr:`feature_columns`, and only for one, each
                molecule's values of them: a mapping :obj:`column ->
                values` (a :obj:`dict` of lists, a pandas
                :obj:`DataFrame`), or one row of values per molecule in the
                order of :attr:`feature_columns` (see
                :data:`~graphormer_sepnorm.predict.feature_columns.
                FeatureValues`). A value that is empty or not a finite
                number gives its molecule an error. (default: :obj:`None`)

        Raises:
            PredictionError: Bad arguments; :obj:`features` missing for a
                model that reads feature columns (the message names them),
                given for one that reads none, or not one row per SMILES.
        """
        for result in self._map_chunks(smiles, batch_size, num_workers,
                                       chunk_size, features):
            yield from result.predictions

    def predict_table(self, smiles: Sequence[str], batch_size: int = 128,
                      num_workers: Optional[int] = None,
                      features: Optional[FeatureValues] = None
                      ) -> list[dict[str, Any]]:
        r"""Like :meth:`predict`, as a list of dicts with keys
        :obj:`smiles`, one per :attr:`output_columns` and :obj:`error`."""
        return [p.as_dict(self.prediction_columns, self.with_std)
                for p in self.predict(smiles, batch_size, num_workers,
                                      features=features)]

    def embed(self, smiles: Sequence[str], batch_size: int = 128,
              num_workers: Optional[int] = None,
              chunk_size: Optional[int] = None,
              features: Optional[FeatureValues] = None) -> np.ndarray:
        r"""The graph-token embedding of every SMILES of :obj:`smiles`
        (:meth:`GraphormerSepNorm.graph_embedding
        <graphormer_sepnorm.GraphormerSepNorm.graph_embedding>`: the graph
        token after the final norm, which the prediction head reads), as
        float32 :obj:`[len(smiles), len(embedding_columns)]` in input order.
        A molecule that cannot be predicted gets a row of NaN, so rows stay
        aligned with the input (:meth:`predict` says why). For an ensemble,
        the members' embeddings side by side, in member order (see
        :attr:`embedding_columns`). Arguments as for :meth:`predict_iter`.
        """
        blocks = [result.embeddings for result in self._map_chunks(
            smiles, batch_size, num_workers, chunk_size, features,
            predict=False, embed=True)]
        if not blocks:
            return np.empty((0, len(self.embedding_columns)), np.float32)
        return np.concatenate(blocks)

    def predict_file(self, input_path: PathLike, output_path: PathLike,
                     **options: Any) -> PredictionSummary:
        r"""Predicts every molecule of a file (CSV, TSV, SMILES or SDF,
        optionally gzipped, or :obj:`"-"` for stdin) into a CSV file,
        streamed chunk by chunk, with resume, shards, top-K and embeddings:
        :func:`~graphormer_sepnorm.predict.predict_file` with the
        :obj:`options` as keywords of
        :class:`~graphormer_sepnorm.predict.PredictFileOptions`."""
        return predict_file(self, input_path, output_path,
                            PredictFileOptions(**options))

    def _map_chunks(self, smiles: Iterable[str], batch_size: int,
                    num_workers: Optional[int], chunk_size: Optional[int],
                    features: Optional[FeatureValues] = None,
                    predict: bool = True, embed: bool = False
                    ) -> Iterator[ChunkResult]:
        r"""The :meth:`run_chunk` result of each chunk of :obj:`smiles`
        (with their :obj:`features`), in order, in worker processes or
        not."""
        if isinstance(smiles, str):
            raise PredictionError(
                "Give a sequence of SMILES strings, not one string; wrap a "
                "single SMILES in a list: predict(['CCO']), embed(['CCO'])")
        chunk_size = self.check_sizes(batch_size, chunk_size)
        iterator = iter(with_features(smiles, features, self.feature_columns))
        chunks = (Chunk(molecules) for molecules in
                  iter(lambda: list(islice(iterator, chunk_size)), []))
        function, finish = self.chunk_functions(batch_size, predict, embed)
        for _, result in stream_chunks(function, chunks, num_workers,
                                       on_cpu=self.device.type == 'cpu',
                                       finish=finish):
            yield result

    def check_sizes(self, batch_size: int, chunk_size: Optional[int]) -> int:
        r"""Checks :obj:`batch_size` and :obj:`chunk_size` and returns the
        chunk size to use."""
        if not isinstance(batch_size, int) or batch_size < 1:
            raise PredictionError(f"batch_size must be a positive integer, "
                                  f"got {batch_size!r}")
        if chunk_size is None:
            return max(1024, 8 * batch_size)
        if not isinstance(chunk_size, int) or chunk_size < 1:
            raise PredictionError(f"chunk_size must be a positive integer, "
                                  f"got {chunk_size!r}")
        return chunk_size

    # Internals ##############################################################

    def predict_chunk(self, molecules: Sequence[Molecule], batch_size: int,
                      kind: str = SMILES) -> list[Prediction]:
        r"""Featurizes, sorts by size, batches and predicts one chunk of
        molecules (see :meth:`run_chunk`); returns their predictions in
        input order."""
        return self.run_chunk(molecules, batch_size, kind).predictions

    def run_chunk(self, molecules: Sequence[Molecule], batch_size: int,
                  kind: str = SMILES, predict: bool = True,
                  embed: bool = False) -> ChunkResult:
        r"""Featurizes, sorts by size, batches and runs one chunk of
        molecules: SMILES strings, or SDF records when :obj:`kind` is
        :obj:`"sdf"`, each with its feature-column values for a
        model that reads :attr:`feature_columns` (a
        :data:`~graphormer_sepnorm.predict.molecules.Molecule`;
        :meth:`featurize_chunk`, then :meth:`run_featurized`).

        Args:
            molecules (list of str or WithColumns): The chunk.
            batch_size (int): Molecules per forward pass.
            kind (str, optional): :obj:`"smiles"` or :obj:`"sdf"`.
                (default: :obj:`"smiles"`)
            predict (bool, optional): Compute the predictions.
                (default: :obj:`True`)
            embed (bool, optional): Compute the graph-token embeddings too
                (see :meth:`embed`). With :obj:`predict`, one pass of the
                encoder gives both. (default: :obj:`False`)
        """
        return self.run_featurized(self.featurize_chunk(molecules, kind),
                                   batch_size, predict, embed)

    def chunk_functions(self, batch_size: int, predict: bool = True,
                        embed: bool = False
                        ) -> tuple[ChunkFunction, Callable[[Any], Any]]:
        r"""The two halves of :meth:`run_chunk` as
        :func:`~graphormer_sepnorm.predict.workers.stream_chunks` takes
        them: :meth:`featurize_chunk` (CPU work, in worker processes
        whatever the model's device) and :meth:`run_featurized` with the
        other arguments bound."""
        return (self.featurize_chunk,
                lambda featurized: self.run_featurized(
                    featurized, batch_size, predict, embed))

    def featurize_chunk(self, molecules: Sequence[Molecule],
                        kind: str = SMILES) -> FeaturizedChunk:
        r"""The CPU half of :meth:`run_chunk`: each molecule's SMILES and
        graph, or why it has none (picklable: worker processes return
        it)."""
        return featurize_molecules(molecules, kind, self.featurizer_name,
                                   self.max_nodes, self.molecule_featurizer)

    def run_featurized(self, featurized: FeaturizedChunk, batch_size: int,
                       predict: bool = True, embed: bool = False
                       ) -> ChunkResult:
        r"""The model half of :meth:`run_chunk` (on :attr:`device`): sorts
        the graphs by size, batches and runs them."""
        smiles, graphs, positions = (featurized.smiles, featurized.graphs,
                                     featurized.positions)
        # The fields of each molecule's Prediction besides its SMILES.
        outputs: list[dict[str, Any]] = [
            {} if error is None else {'error': error}
            for error in featurized.errors]
        embeddings = (np.full((len(smiles), len(self.embedding_columns)),
                              np.nan, np.float32) if embed else None)
        # Stable sort by size: each batch holds molecules of similar size.
        order = sorted(range(len(graphs)), key=lambda k: graphs[k][0].shape[0])
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                members = order[start:start + batch_size]
                for k, output in zip(members, self._run_batch(
                        [graphs[k] for k in members], predict, embed)):
                    if 'embedding' in output:
                        embeddings[positions[k]] = output.pop('embedding')
                    outputs[positions[k]] = output
        return ChunkResult(
            [Prediction(s, **fields) for s, fields in zip(smiles, outputs)],
            embeddings)

    def _prepare(self, smiles: str) -> Graph:
        return prepare_graph(smiles, self.featurizer_name, self.max_nodes)

    def _run_batch(self, graphs: list[Graph], predict: bool = True,
                   embed: bool = False) -> list[dict[str, Any]]:
        r"""Each molecule's :class:`Prediction` fields (with
        :obj:`predict`) and its :obj:`"embedding"` row (with :obj:`embed`),
        or an error."""
        try:
            batch = collate(graphs, self._layout).to(self.device)
            with (single_thread() if self.device.type == 'cpu'
                  else contextlib.nullcontext()):
                return self._fields(batch, len(graphs), predict, embed)
        except (ValueError, IndexError, RuntimeError) as error:
            if is_device_error(error):
                # The device, not a molecule: retrying one by one would only
                # fail again (a CUDA error leaves the context unusable).
                raise PredictionError(
                    f"The model failed on {self.device} "
                    f"({_first_line(error)}); stopped. Out of memory: lower "
                    f"the batch size (--batch-size); otherwise restart the "
                    f"process, or predict on the CPU (--device cpu)"
                ) from None
            if len(graphs) == 1:
                return [{'error': f"The model could not predict this "
                                  f"molecule ({_first_line(error)})"}]
            # Find the molecule(s) at fault; the others still get values.
            return [output for graph in graphs
                    for output in self._run_batch([graph], predict, embed)]

    def _fields(self, batch: GraphBatch, num_graphs: int, predict: bool,
                embed: bool) -> list[dict[str, Any]]:
        r"""Each molecule's :class:`Prediction` fields (with
        :obj:`predict`: the members' mean value, and their population
        standard deviation, divided by the number of members, if
        :attr:`with_std`) and :obj:`"embedding"` row (with :obj:`embed`: the
        members' embeddings side by side, in member order), every member
        running on the batch."""
        runs = [member._run_model(batch, predict, embed)
                for member in self.members]
        fields: list[dict[str, Any]] = [{} for _ in range(num_graphs)]
        if predict:
            values = torch.stack([run[0] for run in runs])
            fields = [{'value': value} for value in
                      molecule_values(values.mean(dim=0).tolist())]
            if self.with_std:
                for entry, std in zip(fields, molecule_values(
                        values.std(dim=0, correction=0).tolist())):
                    entry['std'] = std
        if embed:
            for entry, row in zip(fields, np.concatenate(
                    [run[1] for run in runs], axis=1)):
                entry['embedding'] = row
        return fields


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0] if str(error) else \
        type(error).__name__
