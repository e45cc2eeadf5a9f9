r"""The :class:`Predictor`: one trained model and its model card, loaded
from a checkpoint, from several (their
:class:`~graphormer_sepnorm.predict.EnsemblePredictor`) or from a bundled
model. What it does with molecules, it shares with the ensemble
(:class:`~graphormer_sepnorm.predict.running.PredictorBase`)."""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np
import torch

from ..bundled import bundled_model_paths, get_bundled_model
from ..checkpoint import (CheckpointError, ModelCard, load_model, read_card,
                          refuse_backbone, resolve_model_file)
from ..data.datasets import TargetScaling
from ..data.featurize import get_featurizer
from ..data.molecule_features import card_molecule_featurizer
from ..data.molecule_graphs import GraphBatch
from ..forest import model_forest
from .ensemble import EnsemblePredictor
from .prediction import PredictionError
from .running import PathLike, PredictorBase

if TYPE_CHECKING:  # pragma: no cover
    from ..models import GraphormerSepNorm

__all__ = ['Predictor']


class Predictor(PredictorBase):
    r"""Predicts a trained :class:`~graphormer_sepnorm.GraphormerSepNorm`
    from SMILES strings (or SDF records, see :meth:`run_chunk`).

    Build it with :meth:`from_checkpoint`, :meth:`from_checkpoints` or
    :meth:`from_bundled` (the last two may give an
    :class:`~graphormer_sepnorm.predict.EnsemblePredictor`), or directly
    from a model in evaluation mode and its
    :class:`~graphormer_sepnorm.checkpoint.ModelCard`.

    Molecules in, predictions (or embeddings) out: :meth:`predict`,
    :meth:`predict_iter`, :meth:`predict_table` and :meth:`embed` in memory,
    :meth:`predict_file` from file to file; see
    :class:`~graphormer_sepnorm.predict.running.PredictorBase` for what
    every molecule gets and how they are batched. A model trained with CSV
    :obj:`data.feature_columns` (:attr:`feature_columns`) also needs each
    molecule's values of those columns: the :obj:`features` argument, or
    the columns of an input CSV or TSV file (see
    :mod:`~graphormer_sepnorm.predict.feature_columns`).

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
        self.molecule_featurizer = card_molecule_featurizer(card, source)
        self.max_nodes = int(model.max_nodes)
        self.num_outputs = int(model.out_channels)
        self.task = card.task
        # Applied on the CPU, to the float64 outputs.
        self.target_scaling = TargetScaling.from_card(card)
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
                         ) -> PredictorBase:
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
                     directory: Optional[PathLike] = None) -> PredictorBase:
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
                registered featurizer and task (read from the cards alone,
                before any weights are loaded).
        """
        entry = get_bundled_model(name)
        paths = bundled_model_paths(entry.name, directory)  # Seed order.
        for path in paths:
            card, _ = read_card(path)
            if (card.featurizer.strip().lower() != entry.featurizer
                    or card.task != entry.task):
                raise CheckpointError(
                    f"{path} is installed as a member of the bundled "
                    f"'{entry.name}' model but its card says "
                    f"featurizer={card.featurizer!r}, task={card.task!r} "
                    f"(expected {entry.featurizer!r}, {entry.task!r}); "
                    f"replace it with the right checkpoint")
        return cls.from_checkpoints(paths, device=device)

    # The model ##############################################################

    @property
    def members(self) -> list[Predictor]:
        r"""The models that run on each batch: this one."""
        return [self]

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
                      self.target_scaling(out))
            forest = model_forest(self.model)
            if forest is not None:
                values = forest.blend(values, batch.graph_features).cpu()
        if embed:
            embeddings = graph_tokens.detach().to('cpu',
                                                  torch.float32).numpy()
        return values, embeddings
