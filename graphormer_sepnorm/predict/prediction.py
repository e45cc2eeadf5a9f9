r"""What a prediction call returns, and the names of the output columns."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

__all__ = ['Prediction', 'PredictionError', 'PREDICTION_COLUMN',
           'ERROR_COLUMN', 'prediction_columns', 'format_value',
           'value_fields']

#: Output column holding the prediction of a single-output model.
PREDICTION_COLUMN = 'prediction'
#: Output column holding the per-row error message (empty when predicted).
ERROR_COLUMN = 'error'


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
        or None}``, one key per model output named in :obj:`columns`
        (:attr:`Predictor.prediction_columns`; default:
        :obj:`("prediction",)`)."""
        values = (self.value if isinstance(self.value, tuple) else
                  (self.value, ) * len(columns))
        return {'smiles': self.smiles, **dict(zip(columns, values)),
                ERROR_COLUMN: self.error}


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


def format_value(value: Optional[float]) -> str:
    r"""One prediction as CSV text: the shortest decimal that reads back as
    the same float, empty for :obj:`None`."""
    return '' if value is None else repr(float(value))


def value_fields(prediction: Prediction, num_outputs: int) -> list[str]:
    r"""The CSV text of :obj:`prediction`'s values, one per prediction
    column (empty ones on error)."""
    values = prediction.value
    if not isinstance(values, tuple):
        values = (values, ) * num_outputs
    return [format_value(v) for v in values]
