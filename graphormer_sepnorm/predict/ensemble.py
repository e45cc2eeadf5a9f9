r"""The :class:`EnsemblePredictor`: several models of one task predicting
together, as :meth:`Predictor.from_checkpoints
<graphormer_sepnorm.predict.Predictor.from_checkpoints>` builds them. It
knows its members, single-model predictors, by what every predictor has
(:class:`~.running.PredictorBase`)."""
from __future__ import annotations

import hashlib
from typing import Any, Callable, Sequence

from ..checkpoint import CheckpointError
from .prediction import STD_SUFFIX, PredictionError
from .running import PredictorBase

__all__ = ['EnsemblePredictor']


#: What every member must share, with how it is named in messages: how
#: molecules are featurized and which are accepted (featurizer, max_nodes),
#: what the outputs mean (task, target names, number of outputs), and where
#: the shared batches go (device).
_SHARED: tuple[tuple[str, Callable[[PredictorBase], Any]], ...] = (
    ('featurizer', lambda p: p.featurizer_name),
    ('task', lambda p: p.task),
    ('number of outputs', lambda p: p.num_outputs),
    ('target names', lambda p: list(p.card.target_names)),
    ('max_nodes', lambda p: p.max_nodes),
    ('molecule features', lambda p: p.card.extra.get('molecule_features')),
    ('device', lambda p: str(p.device)),
)


class EnsemblePredictor(PredictorBase):
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

    Its embedding (:meth:`embed`) is the members' graph-token embeddings
    side by side, in member order (columns :obj:`member0_embedding_0`, ...,
    :obj:`member1_embedding_0`, ...): each member learned its own space, so
    their embeddings are not averaged; the first member's are the first
    columns.

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
            number of outputs, :obj:`max_nodes`, molecule features (with
            their feature columns and statistics) and device.

    Raises:
        CheckpointError: If a member does not fit the first one (the
            message names its file and the field that differs) or two
            members are the same model.
    """
    def __init__(self, members: Sequence[PredictorBase]) -> None:
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
        seen: dict[str, PredictorBase] = {}
        for member in members:
            if member.fingerprint in seen:
                raise CheckpointError(
                    f"Ensemble members {_name(seen[member.fingerprint])} and "
                    f"{_name(member)} are the same model; give each model "
                    f"once")
            seen[member.fingerprint] = member
        self.members = members
        # What the members share (card: the first one's); the prediction
        # methods of PredictorBase read these (one featurization for all).
        for name in ('card', 'device', 'featurizer_name', 'max_nodes',
                     'num_outputs', 'task', 'molecule_featurizer'):
            setattr(self, name, getattr(first, name))
        # One layout for every member when they walk the same hops; else
        # each member's model lays the batch out itself.
        layouts = {tuple(sorted(m._layout.items())) for m in members}
        self._layout = first._layout if len(layouts) == 1 else None
        self.source = (f"ensemble of {len(members)} models "
                       f"({', '.join(_name(m) for m in members)})")

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


def _name(member: PredictorBase) -> str:
    return member.source or 'model'
