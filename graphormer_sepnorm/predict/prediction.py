r"""What a prediction call returns, and the names of the output columns."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Container, Optional, Sequence, Union

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = ['Prediction', 'PredictionError', 'ChunkResult',
           'PREDICTION_COLUMN', 'ERROR_COLUMN', 'STD_SUFFIX',
           'prediction_columns',
           'PRED_SUFFIX', 'output_columns', 'columns_beside',
           'free_name', 'molecule_values', 'format_value', 'value_fields']

#: Output column holding the prediction of a single-output model.
PREDICTION_COLUMN = 'prediction'
#: Output column holding the per-row error message (empty when predicted).
ERROR_COLUMN = 'error'
#: Ending of the column beside each prediction column that holds the spread
#: of an ensemble's members (:obj:`prediction_std`).
STD_SUFFIX = '_std'

#: Appended to an output column named as an input column, until the name is
#: free: the input's own column (e.g. its labels) is kept as it is.
PRED_SUFFIX = '_pred'

Value = Optional[Union[float, tuple[float, ...]]]


class PredictionError(ValueError):
    r"""A problem with a prediction call as a whole (not with one molecule):
    an unreadable input, a missing column, an output that cannot be written,
    a bad argument."""


@dataclass(frozen=True)
class Prediction:
    r"""The prediction for one input molecule.

    Attributes:
        smiles (str): The input SMILES, as given (for SDF records, the SMILES
            RDKit writes for the record).
        value (float, optional): Regression: the property in the units of the
            training targets; binary: the probability of the positive class.
            A tuple of floats for models with several outputs. For an
            ensemble, the mean over its members of these values. :obj:`None`
            if the molecule could not be predicted.
        error (str, optional): Why the molecule could not be predicted;
            :obj:`None` if it was.
        std (float, optional): For an ensemble, the spread of its members'
            values around :obj:`value`: their population standard deviation
            (divided by the number of members, not one less), in the units
            of :obj:`value`; a tuple like :obj:`value` for several outputs.
            :obj:`None` for a single model or a molecule not predicted.
    """
    smiles: str
    value: Value = None
    error: Optional[str] = None
    std: Value = None

    @property
    def ok(self) -> bool:
        r""":obj:`True` if the molecule was predicted."""
        return self.error is None

    def as_dict(self, columns: Sequence[str] = (PREDICTION_COLUMN, ),
                with_std: bool = False) -> dict[str, Any]:
        r"""``{'smiles': ..., <column>: value or None, ..., 'error': message
        or None}``, one key per model output named in :obj:`columns`
        (:attr:`Predictor.prediction_columns`; default:
        :obj:`("prediction",)`), each followed by ``<column>_std`` if
        :obj:`with_std` (:attr:`Predictor.with_std`; default:
        :obj:`False`)."""
        return {'smiles': self.smiles,
                **dict(zip(output_columns(columns, with_std),
                           self.outputs(len(columns), with_std))),
                ERROR_COLUMN: self.error}

    def outputs(self, num_outputs: int, with_std: bool = False
                ) -> list[Optional[float]]:
        r"""The value of each of the :obj:`num_outputs` outputs, each
        followed by its :obj:`std` if :obj:`with_std` (default:
        :obj:`False`), in the order of :func:`output_columns`; :obj:`None`
        for each if the molecule was not predicted."""
        values = _per_output(self.value, num_outputs)
        if not with_std:
            return values
        stds = _per_output(self.std, num_outputs)
        return [x for pair in zip(values, stds) for x in pair]


@dataclass
class ChunkResult:
    r"""What :meth:`Predictor.run_chunk
    <graphormer_sepnorm.predict.Predictor.run_chunk>` returns for one chunk
    of molecules.

    Attributes:
        predictions (list[Prediction]): One per molecule, in input order
            (without :obj:`predict`, only :attr:`Prediction.smiles` and
            :attr:`Prediction.error` are set).
        embeddings (numpy.ndarray, optional): With :obj:`embed`, the
            graph-token embeddings, float32 :obj:`[molecules, width]` in
            input order, a row of NaN for each molecule with an error.
    """
    predictions: list[Prediction]
    embeddings: Optional[np.ndarray] = None


def _per_output(value: Value, num_outputs: int) -> list[Optional[float]]:
    return list(value) if isinstance(value, tuple) else \
        [value] * num_outputs


def prediction_columns(num_outputs: int,
                       target_names: Sequence[str] = ()) -> list[str]:
    r"""The output columns that hold a model's predictions, one per model
    output: the training targets' names when the model card has them (a
    model trained on a CSV: named as its target columns), else
    :obj:`prediction` for a single output and :obj:`prediction_1`,
    :obj:`prediction_2`, ... otherwise.

    This is the one place that names them (the writers, :obj:`--top/--by`
    and the merge all ask
    :attr:`~graphormer_sepnorm.predict.Predictor.prediction_columns`), so a
    model card that names its targets only changes what is passed here.

    Args:
        num_outputs (int): Outputs of the model (its :obj:`out_channels`).
        target_names (list of str, optional): The model card's
            :obj:`target_names`. (default: :obj:`()`)
    """
    if target_names:
        if len(target_names) != num_outputs:
            raise PredictionError(
                f"The model card names {len(target_names)} targets "
                f"({', '.join(target_names)}) but the model has "
                f"{num_outputs} outputs; the checkpoint is damaged")
        return list(target_names)
    if num_outputs == 1:
        return [PREDICTION_COLUMN]
    return [f'{PREDICTION_COLUMN}_{k + 1}' for k in range(num_outputs)]


def output_columns(columns: Sequence[str],
                   with_std: bool = False) -> list[str]:
    r"""The columns written for each molecule: the prediction columns,
    each followed by ``<column>_std`` if :obj:`with_std` (ensembles; the
    two stay side by side however many outputs the model has).

    Args:
        columns (list of str): The prediction columns (see
            :func:`prediction_columns`).
        with_std (bool, optional): Add the std columns.
            (default: :obj:`False`)
    """
    if not with_std:
        return list(columns)
    return [name for column in columns
            for name in (column, column + STD_SUFFIX)]


def free_name(name: str, taken: Container[str]) -> str:
    r""":obj:`name`, or if it is :obj:`taken`, :obj:`name` followed by
    ``_pred`` as many times as it takes to be free."""
    while name in taken:
        name += PRED_SUFFIX
    return name


def columns_beside(taken: Sequence[str], columns: Sequence[str],
                   with_std: bool = False) -> list[str]:
    r"""The output columns (see :func:`output_columns`) and :obj:`error`,
    named so that none is one of the input columns :obj:`taken`: the input
    columns all stay, a colliding output column is renamed.

    A prediction column named as an input column (a target's own labels in
    the input CSV) gets ``_pred`` appended, again until neither it nor, with
    :obj:`with_std`, its ``<column>_std`` is taken (the two stay a pair);
    likewise :obj:`error`. Without collisions the names are those of
    :func:`output_columns`.

    Args:
        taken (list of str): The input columns written before them.
        columns (list of str): The prediction columns (see
            :func:`prediction_columns`).
        with_std (bool, optional): Add the std columns.
            (default: :obj:`False`)
    """
    used = set(taken)
    renamed = []
    for column in columns:
        while column in used or (with_std and column + STD_SUFFIX in used):
            column += PRED_SUFFIX
        renamed.append(column)
        used.update(output_columns([column], with_std))
    return output_columns(renamed, with_std) + [free_name(ERROR_COLUMN, used)]


def molecule_values(table: Sequence[Sequence[float]]) -> list[Value]:
    r"""The :attr:`Prediction.value` (or :attr:`Prediction.std`) of each
    row of :obj:`table`, one row per molecule and one column per model
    output: a float for one output, a tuple for several."""
    return [row[0] if len(row) == 1 else tuple(row) for row in table]


def format_value(value: Optional[float]) -> str:
    r"""One prediction as CSV text: the shortest decimal that reads back as
    the same float, empty for :obj:`None`."""
    return '' if value is None else repr(float(value))


def value_fields(prediction: Prediction, num_outputs: int,
                 with_std: bool = False) -> list[str]:
    r"""The CSV text of :obj:`prediction`'s values, one per prediction
    column, each followed by its std if :obj:`with_std` (default:
    :obj:`False`); empty ones on error. See :meth:`Prediction.outputs`."""
    return [format_value(v)
            for v in prediction.outputs(num_outputs, with_std)]
