r"""The :class:`Predictor`: a trained model and its model card, turning
molecules into predictions; and the :class:`EnsemblePredictor`, several
models that predict together.

The two share this module because each names the other: the ensemble is a
:class:`Predictor`, and :meth:`Predictor.from_checkpoints` and
:meth:`Predictor.from_bundled` return an ensemble for several checkpoints.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import asdict, dataclass
from itertools import islice
from pathlib import Path
from typing import (TYPE_CHECKING, Any, Callable, Iterable, Iterator,
                    Optional, Sequence, Union)

import numpy as np
import torch

from ..checkpoint import (CheckpointError, ModelCard, load_model,
                          refuse_backbone, resolve_model_file)
from ..data.datasets import destandardize
from ..data.featurize import FeaturizationError, get_featurizer
from . import pipeline
from ..data.molecule_graphs import Graph, GraphBatch, collate, prepare_graph
from .loading import bundled_member_paths
from .molecules import SMILES, sdf_record_to_smiles
from .prediction import (STD_SUFFIX, ChunkResult, Prediction,
                         PredictionError, molecule_values, output_columns,
                         prediction_columns)
from .workers import Chunk, ChunkFunction, single_thread, stream_chunks

if TYPE_CHECKING:  # pragma: no cover
    from ..models import GraphormerSepNorm

__all__ = ['Predictor', 'EnsemblePredictor', 'FeaturizedChunk',
           'is_device_error']

PathLike = Union[str, Path]


@dataclass
class FeaturizedChunk:
    r"""What :meth:`Predictor.featurize_chunk` returns for one chunk.

    Attributes:
        smiles (list[str]): Each molecule's SMILES, in input order.
        errors (list[str or None]): Why each molecule has no graph, or
            :obj:`None`.
        graphs (list[Graph]): The graphs of the molecules that have one.
        positions (list[int]): The input position of each graph.
    """
    smiles: list[str]
    errors: list[Optional[str]]
    graphs: list[Graph]
    positions: list[int]


class Predictor:
    r"""Predicts a trained :class:`~graphormer_sepnorm.GraphormerSepNorm`
    from SMILES strings (or SDF records, see :meth:`run_chunk`).

    Build it with :meth:`from_checkpoint`, :meth:`from_checkpoints` or
    :meth:`from_bundled` (the last two may give an
    :class:`EnsemblePredictor`), or directly from a model in evaluation mode
    and its :class:`~graphormer_sepnorm.checkpoint.ModelCard`.

    Molecules in, predictions (or embeddings) out: :meth:`predict`,
    :meth:`predict_iter`, :meth:`predict_table` and :meth:`embed` in memory,
    :meth:`predict_file` from file to file (handed to
    :func:`~graphormer_sepnorm.predict.predict_file`, which knows a
    predictor only by the members it uses, so that this module may import
    it).

    Every input molecule gets one :class:`Prediction`, in input order: its
    value (regression: the property in the units of the training targets,
    i.e. the model output times :obj:`target_std` plus :obj:`target_mean`;
    binary: the probability of the positive class, the sigmoid of the
    model's logit) or an error message (unparsable SMILES, atoms the
    featurizer cannot encode, more atoms than the model's :obj:`max_nodes`).
    Only problems with the call itself raise, as :class:`PredictionError` or
    :class:`~graphormer_sepnorm.checkpoint.CheckpointError`.

    Molecules are featurized straight into NumPy arrays, sorted by size
    within chunks of :obj:`chunk_size` consecutive molecules (so that each
    batch is padded little: attention costs grow with the square of the
    largest graph of a batch), batched without
    :class:`~torch_geometric.data.Data` objects and run under
    :func:`torch.inference_mode`, on one thread on CPU (several cores are
    used by worker processes). A chunk's predictions depend only on the
    chunk, so they are the same bit for bit however the chunks are spread
    over worker processes, shards or resumed runs.

    Args:
        model (GraphormerSepNorm): The model.
        card (ModelCard): Its featurizer, task and target normalization.
        device (str or torch.device, optional): Where the model runs.
            (default: :obj:`"cpu"`)
        source (str, optional): Where the model came from, for messages.
    """
    def __init__(self, model: 'GraphormerSepNorm', card: ModelCard,
                 device: Union[str, torch.device] = 'cpu',
                 source: Optional[str] = None) -> None:
        refuse_backbone(card, source or 'model')
        if card.task not in ('regression', 'binary'):
            raise CheckpointError(
                f"{source or 'model'}: unknown task {card.task!r} in its "
                f"model card (expected 'regression' or 'binary')")
        try:
            get_featurizer(card.featurizer)  # A known featurizer.
        except ValueError as error:
            raise CheckpointError(f"{source or 'model'}: {error}") from None
        try:
            self.device = torch.device(device)
            self.model = model.to(self.device).eval()
        except (RuntimeError, AssertionError, ValueError) as error:
            raise PredictionError(
                f"Cannot use device {str(device)!r}: "
                f"{str(error).splitlines()[0]}") from None
        # Batches here are already sorted by size: buckets would only add
        # copies (same outputs either way).
        self._layout = dict(self.model.layout_options(), num_buckets=1)
        self.card = card
        self.source = source
        self.featurizer_name = card.featurizer.strip().lower()
        self.max_nodes = int(model.max_nodes)
        self.num_outputs = int(model.out_channels)
        self.task = card.task
        # One value per target (a float in single-target model cards).
        self.target_mean = torch.tensor(card.target_mean,
                                        dtype=torch.float64).view(-1)
        self.target_std = torch.tensor(card.target_std,
                                       dtype=torch.float64).view(-1)
        self._fingerprint: Optional[str] = None

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
                graphormer-sepnorm checkpoint (a training checkpoint such as
                :obj:`checkpoints/last.ckpt` gets a message naming the file
                to pass instead), or does not fit this version.
        """
        path = resolve_model_file(path)
        model, card = load_model(path, map_location='cpu')
        return cls(model, card, device=device, source=str(path))

    @classmethod
    def from_checkpoints(cls, paths: Sequence[PathLike],
                         device: Union[str, torch.device] = 'cpu'
                         ) -> 'Predictor':
        r"""Loads one checkpoint or an ensemble of several, each a file or
        a run directory as for :meth:`from_checkpoint`.

        One path gives the same :class:`Predictor` as
        :meth:`from_checkpoint`; several give an :class:`EnsemblePredictor`
        that averages their predictions and reports their spread.

        Args:
            paths (list of str or Path): The checkpoints, at least one, each
                once.
            device (str or torch.device, optional): Where the models run.
                (default: :obj:`"cpu"`)

        Raises:
            CheckpointError: If a checkpoint cannot be loaded, or several
                do not fit together (see :class:`EnsemblePredictor`).
        """
        if isinstance(paths, (str, Path)):
            raise PredictionError(
                "from_checkpoints() takes a list of checkpoints; wrap a "
                "single path in a list or use from_checkpoint()")
        if not paths:
            raise PredictionError('Give at least one checkpoint')
        # Members are single models, whichever class this is called on.
        members = [Predictor.from_checkpoint(path, device) for path in paths]
        return members[0] if len(members) == 1 else EnsemblePredictor(members)

    @classmethod
    def from_bundled(cls, name: str,
                     device: Union[str, torch.device] = 'cpu',
                     directory: Optional[PathLike] = None) -> 'Predictor':
        r"""Loads a bundled model, :obj:`"zinc"` (penalized logP) or
        :obj:`"molhiv"` (probability of HIV activity); see
        :mod:`graphormer_sepnorm.bundled`. A model of several members (one
        per training seed) loads as their ensemble, as
        :meth:`from_checkpoints` does.

        Args:
            name (str): The registered name.
            device (str or torch.device, optional): Where the models run.
                (default: :obj:`"cpu"`)
            directory (str or Path, optional): Folder of the member files
                instead of the installed one (see
                :func:`~graphormer_sepnorm.bundled.bundled_dir`).
                (default: :obj:`None`)

        Raises:
            ValueError: If :obj:`name` is not a registered model.
            BundledModelNotInstalled: If none of its members is installed
                (the message says how to train and bundle one).
            CheckpointError: If a member's card does not name the
                registered featurizer and task.
        """
        return cls.from_checkpoints(bundled_member_paths(name, directory),
                                    device=device)

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
        across the members of an ensemble (:obj:`False` here)."""
        return False

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
    def embedding_columns(self) -> list[str]:
        r"""The names of the graph-token embedding's dimensions
        (:meth:`embed`): :obj:`embedding_0`, :obj:`embedding_1`, ...,
        one per hidden channel of the model."""
        return [f'embedding_{j}'
                for j in range(int(self.model.hidden_channels))]

    @property
    def fingerprint(self) -> str:
        r"""SHA-256 of the model card and every weight and buffer: two
        predictors with the same fingerprint predict the same values.
        Recorded beside prediction files so that :obj:`resume` and the
        merge of shards can check they continue the same model."""
        if self._fingerprint is None:
            digest = hashlib.sha256(
                json.dumps(asdict(self.card), sort_keys=True,
                           default=str).encode())
            for name, tensor in self.model.state_dict().items():
                digest.update(name.encode())
                digest.update(
                    tensor.detach().cpu().contiguous().view(-1).view(
                        torch.uint8).numpy().tobytes())
            self._fingerprint = digest.hexdigest()
        return self._fingerprint

    # Prediction #############################################################

    def predict(self, smiles: Sequence[str], batch_size: int = 128,
                num_workers: Optional[int] = None,
                chunk_size: Optional[int] = None) -> list[Prediction]:
        r"""Predicts every SMILES of :obj:`smiles`; returns one
        :class:`Prediction` per input, in input order. See
        :meth:`predict_iter` for the arguments."""
        return list(self.predict_iter(smiles, batch_size, num_workers,
                                      chunk_size))

    def predict_iter(self, smiles: Iterable[str], batch_size: int = 128,
                     num_workers: Optional[int] = None,
                     chunk_size: Optional[int] = None
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
        """
        for result in self._map_chunks(smiles, batch_size, num_workers,
                                       chunk_size):
            yield from result.predictions

    def predict_table(self, smiles: Sequence[str], batch_size: int = 128,
                      num_workers: Optional[int] = None
                      ) -> list[dict[str, Any]]:
        r"""Like :meth:`predict`, as a list of dicts with keys
        :obj:`smiles`, one per :attr:`output_columns` and :obj:`error`."""
        return [p.as_dict(self.prediction_columns, self.with_std)
                for p in self.predict(smiles, batch_size, num_workers)]

    def embed(self, smiles: Sequence[str], batch_size: int = 128,
              num_workers: Optional[int] = None,
              chunk_size: Optional[int] = None) -> np.ndarray:
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
            smiles, batch_size, num_workers, chunk_size, predict=False,
            embed=True)]
        if not blocks:
            return np.empty((0, len(self.embedding_columns)), np.float32)
        return np.concatenate(blocks)

    def predict_file(self, input_path: PathLike, output_path: PathLike,
                     **options: Any) -> pipeline.PredictionSummary:
        r"""Predicts every molecule of a file (CSV, TSV, SMILES or SDF,
        optionally gzipped, or :obj:`"-"` for stdin) into a CSV file,
        streamed chunk by chunk, with resume, shards, top-K and embeddings;
        see :func:`graphormer_sepnorm.predict.predict_file` for the
        options."""
        return pipeline.predict_file(self, input_path, output_path,
                                     **options)

    def _map_chunks(self, smiles: Iterable[str], batch_size: int,
                    num_workers: Optional[int], chunk_size: Optional[int],
                    predict: bool = True, embed: bool = False
                    ) -> Iterator[ChunkResult]:
        r"""The :meth:`run_chunk` result of each chunk of :obj:`smiles`, in
        order, in worker processes or not."""
        if isinstance(smiles, str):
            raise PredictionError(
                "Give a sequence of SMILES strings, not one string; wrap a "
                "single SMILES in a list: predict(['CCO']), embed(['CCO'])")
        chunk_size = self.check_sizes(batch_size, chunk_size)
        iterator = iter(smiles)
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

    def predict_chunk(self, molecules: Sequence[str], batch_size: int,
                      kind: str = SMILES) -> list[Prediction]:
        r"""Featurizes, sorts by size, batches and predicts one chunk of
        molecules (see :meth:`run_chunk`); returns their predictions in
        input order."""
        return self.run_chunk(molecules, batch_size, kind).predictions

    def run_chunk(self, molecules: Sequence[str], batch_size: int,
                  kind: str = SMILES, predict: bool = True,
                  embed: bool = False) -> ChunkResult:
        r"""Featurizes, sorts by size, batches and runs one chunk of
        molecules: SMILES strings, or SDF records when :obj:`kind` is
        :obj:`"sdf"` (:meth:`featurize_chunk`, then
        :meth:`run_featurized`).

        Args:
            molecules (list of str): The chunk.
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

    def featurize_chunk(self, molecules: Sequence[str],
                        kind: str = SMILES) -> FeaturizedChunk:
        r"""The CPU half of :meth:`run_chunk`: each molecule's SMILES and
        graph, or why it has none (picklable: worker processes return
        it)."""
        smiles: list[str] = list(molecules)
        errors: list[Optional[str]] = [None] * len(smiles)
        graphs: list[Graph] = []
        positions: list[int] = []
        for i, molecule in enumerate(molecules):
            try:
                if kind != SMILES:
                    smiles[i] = ''
                    smiles[i] = sdf_record_to_smiles(molecule)
                graphs.append(self._prepare(smiles[i]))
                positions.append(i)
            except FeaturizationError as error:
                errors[i] = str(error)
            except Exception as error:  # One bad molecule never stops the rest.
                errors[i] = (f"SMILES {smiles[i]!r} could not be featurized "
                             f"({type(error).__name__}: {error})")
        return FeaturizedChunk(smiles, errors, graphs, positions)

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
        :obj:`predict`) and :obj:`"embedding"` row (with :obj:`embed`)."""
        values, embeddings = self._run_model(batch, predict, embed)
        fields = ([{'value': value} for value in
                   molecule_values(values.tolist())] if predict else
                  [{} for _ in range(num_graphs)])
        return with_embeddings(fields, embeddings)

    def _run_model(self, batch: GraphBatch, predict: bool, embed: bool
                   ) -> tuple[Optional[torch.Tensor], Optional[np.ndarray]]:
        r"""One pass of the encoder over :obj:`batch`, whose graph tokens
        give both outputs: with :obj:`predict`, the predictions as float64
        on the CPU, :obj:`[num_graphs, num_outputs]`, in the units of
        :attr:`Prediction.value`; with :obj:`embed`, the graph-token
        embeddings as float32 :obj:`[num_graphs, len(embedding_columns)]`.
        """
        graph_tokens = self.model.graph_embedding(batch)
        values = embeddings = None
        if predict:
            out = self.model.head_output(graph_tokens).detach().to(
                'cpu', torch.float64)
            values = (torch.sigmoid(out) if self.task == 'binary' else
                      destandardize(out, self.target_mean, self.target_std))
        if embed:
            embeddings = graph_tokens.detach().to('cpu',
                                                  torch.float32).numpy()
        return values, embeddings


#: What every member must share, with how it is named in messages: how
#: molecules are featurized and which are accepted (featurizer, max_nodes),
#: what the outputs mean (task, target names, number of outputs), and where
#: the shared batches go (device).
_SHARED: tuple[tuple[str, Callable[[Predictor], Any]], ...] = (
    ('featurizer', lambda p: p.featurizer_name),
    ('task', lambda p: p.task),
    ('number of outputs', lambda p: p.num_outputs),
    ('target names', lambda p: list(p.card.target_names)),
    ('max_nodes', lambda p: p.max_nodes),
    ('device', lambda p: str(p.device)),
)


class EnsemblePredictor(Predictor):
    r"""Several models of one task predicting together: each molecule is
    featurized once and every member runs on the same batches.

    :attr:`Prediction.value` is the mean of the members' values, each in
    the units of :attr:`Prediction.value` for that member: regression
    members are averaged after each maps its output back to the units of
    the training targets with its own :obj:`target_mean` and
    :obj:`target_std`; binary members average their probabilities (not
    their logits). :attr:`Prediction.std` is the population standard
    deviation of the members' values (divided by the number of members,
    not one less: the spread of exactly these models), written to a
    ``<column>_std`` column beside each prediction column. A molecule that
    any member cannot predict gets an error.

    The :attr:`fingerprint` covers every member, in order, so a resumed
    run or a merged shard must use the same members as the run it
    continues. Worker processes inherit the ensemble as they do a single
    model.

    Its embedding (:meth:`Predictor.embed`) is
    the members' graph-token embeddings side by side, in member order
    (columns :obj:`member0_embedding_0`, ..., :obj:`member1_embedding_0`,
    ...): each member learned its own space, so their embeddings are not
    averaged; the first member's are the first columns.

    Build it with :meth:`Predictor.from_checkpoints([path, ...])
    <Predictor.from_checkpoints>`, or from loaded single-model predictors:

    .. code-block:: python

        from graphormer_sepnorm.predict import Predictor

        ensemble = Predictor.from_checkpoints(['runs/zinc_seed0',
                                               'runs/zinc_seed1',
                                               'runs/zinc_seed2'])
        p = ensemble.predict(['CCO'])[0]
        p.value, p.std  # The members' mean, and their standard deviation.

    Args:
        members (list of Predictor): At least two single-model predictors,
            each a different model, sharing featurizer, task, target names,
            number of outputs, :obj:`max_nodes` and device.

    Raises:
        CheckpointError: If a member does not fit the first one (the
            message names its file and the field that differs) or two
            members are the same model.
    """
    def __init__(self, members: Sequence[Predictor]) -> None:
        members = list(members)
        if len(members) < 2 or any(isinstance(m, EnsemblePredictor)
                                   for m in members):
            raise PredictionError(
                "An ensemble is built from two or more single-model "
                "predictors; use a Predictor alone for one model")
        first = members[0]
        for member in members[1:]:
            for name, get in _SHARED:
                if get(member) != get(first):
                    raise CheckpointError(
                        f"Ensemble member {_name(member)} has {name} "
                        f"{get(member)!r} but {_name(first)} has "
                        f"{get(first)!r}; all members must share "
                        f"{', '.join(name for name, _ in _SHARED)}")
        seen: dict[str, Predictor] = {}
        for member in members:
            if member.fingerprint in seen:
                raise CheckpointError(
                    f"Ensemble members {_name(seen[member.fingerprint])} and "
                    f"{_name(member)} are the same model; give each model "
                    f"once")
            seen[member.fingerprint] = member
        self.members = members
        # What the members share; the prediction methods of Predictor read
        # these (one featurization for all members).
        self.card = first.card
        self.device = first.device
        self.featurizer_name = first.featurizer_name
        self.max_nodes = first.max_nodes
        self.num_outputs = first.num_outputs
        self.task = first.task
        # One layout for every member when they walk the same hops; else
        # each member's model lays the batch out itself.
        layouts = {tuple(sorted(m._layout.items())) for m in members}
        self._layout = first._layout if len(layouts) == 1 else None
        self.source = (f"ensemble of {len(members)} models "
                       f"({', '.join(_name(m) for m in members)})")

    @property
    def with_std(self) -> bool:
        r""":obj:`True`: predictions carry the members' spread."""
        return True

    @property
    def value_description(self) -> str:
        r"""What :attr:`Prediction.value` means for this ensemble."""
        return (f"mean over the {len(self.members)} members of the "
                f"{super().value_description}")

    @property
    def columns_description(self) -> str:
        r"""What the output columns hold, for messages."""
        stds = ', '.join(c + STD_SUFFIX for c in self.prediction_columns)
        return (f"{super().columns_description}; {stds} = the population "
                f"standard deviation across the members")

    @property
    def fingerprint(self) -> str:
        r"""SHA-256 of the members' fingerprints, in order: another member,
        one more or fewer, or another order gives another fingerprint."""
        digest = hashlib.sha256(b'ensemble')
        for member in self.members:
            digest.update(member.fingerprint.encode())
        return digest.hexdigest()

    @property
    def embedding_columns(self) -> list[str]:
        r"""The dimensions of the members' embeddings side by side:
        :obj:`member<k>_embedding_<j>` for dimension :obj:`j` of member
        :obj:`k` (both from 0, members in the order given)."""
        return [f'member{k}_{column}'
                for k, member in enumerate(self.members)
                for column in member.embedding_columns]

    def _fields(self, batch: GraphBatch, num_graphs: int, predict: bool,
                embed: bool) -> list[dict[str, Any]]:
        runs = [member._run_model(batch, predict, embed)
                for member in self.members]
        fields: list[dict[str, Any]] = [{} for _ in range(num_graphs)]
        if predict:
            values = torch.stack([run[0] for run in runs])
            mean = values.mean(dim=0)
            std = values.std(dim=0, correction=0)  # Population std, above.
            fields = [{'value': value, 'std': spread}
                      for value, spread in zip(molecule_values(mean.tolist()),
                                               molecule_values(std.tolist()))]
        return with_embeddings(fields, np.concatenate(
            [run[1] for run in runs], axis=1) if embed else None)


def _name(member: Predictor) -> str:
    return member.source or 'model'


def with_embeddings(fields: list[dict[str, Any]],
                    embeddings: Optional[np.ndarray]
                    ) -> list[dict[str, Any]]:
    r""":obj:`fields`, each with its row of :obj:`embeddings` as
    :obj:`"embedding"` (unchanged without embeddings)."""
    if embeddings is not None:
        for entry, row in zip(fields, embeddings):
            entry['embedding'] = row
    return fields


#: Parts of the messages of errors that come from the device, not from a
#: molecule (CUDA errors, device-side asserts, cuBLAS/cuDNN failures).
_DEVICE_ERROR_MARKERS = ('CUDA', 'cuda', 'device-side assert', 'CUBLAS',
                         'cuBLAS', 'CUDNN', 'cuDNN')


def is_device_error(error: BaseException) -> bool:
    r"""Whether :obj:`error` is a failure of the accelerator (a CUDA error,
    a device-side assert, CUDA out of memory) rather than of the molecules
    of the batch."""
    kinds = tuple(kind for kind in (getattr(torch.cuda, 'CudaError', None),
                                    getattr(torch, 'AcceleratorError', None),
                                    torch.cuda.OutOfMemoryError)
                  if isinstance(kind, type))
    return isinstance(error, kinds) or any(
        marker in str(error) for marker in _DEVICE_ERROR_MARKERS)


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0] if str(error) else \
        type(error).__name__
