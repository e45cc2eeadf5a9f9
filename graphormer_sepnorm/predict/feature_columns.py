r"""The CSV columns that a model trained with :obj:`data.feature_columns`
reads beside the SMILES as molecule features (their names are in its card,
:attr:`PredictorBase.feature_columns
<graphormer_sepnorm.predict.PredictorBase.feature_columns>`): how
prediction is given their values, one row per molecule.

* From a file: a CSV or TSV input holds the columns by name
  (:func:`column_positions`, checked before any work; a SMILES or SDF file
  has none and is refused).
* In memory: the :obj:`features` argument of :meth:`predict
  <graphormer_sepnorm.predict.PredictorBase.predict>` and
  :meth:`embed <graphormer_sepnorm.predict.PredictorBase.embed>`
  (:data:`FeatureValues`, paired with the SMILES by
  :func:`with_features`).

Each molecule then travels with its values
(:class:`~.molecules.WithColumns`), and the model card's fitted
:class:`~graphormer_sepnorm.data.molecule_features.MoleculeFeaturizer`
turns the values into features exactly as training did: a value that is
empty or not a finite number gives that molecule an error row, the others
are predicted.
"""
from __future__ import annotations

from collections.abc import Sized
from typing import Any, Iterable, Iterator, Mapping, Optional, Sequence, \
    Union

from .molecules import Molecule, WithColumns
from .prediction import PredictionError

__all__ = ['FeatureValues', 'column_positions', 'with_features']

#: The values of the feature columns given to :meth:`predict
#: <graphormer_sepnorm.predict.PredictorBase.predict>`, one per molecule:
#: a mapping :obj:`column -> values` (a :obj:`dict` of lists, a pandas
#: :obj:`DataFrame`; other columns are ignored), or one row of values per
#: molecule in the order of :attr:`feature_columns
#: <graphormer_sepnorm.predict.PredictorBase.feature_columns>` (a list of
#: lists, a 2-D NumPy array). Values are numbers or their text.
FeatureValues = Union[Mapping[str, Sequence[Any]], Sequence[Sequence[Any]]]

_END = object()


def _reads(columns: Sequence[str]) -> str:
    return (f"the model reads the column(s) {', '.join(columns)} beside the "
            f"SMILES as molecule features (it was trained with "
            f"data.feature_columns)")


def column_positions(header: Sequence[str], columns: Sequence[str],
                     source: str, input_format: str
                     ) -> Optional[list[int]]:
    r"""The positions in :obj:`header` of the feature :obj:`columns` a
    model reads; :obj:`None` for a model that reads none.

    Args:
        header (list of str): The input's columns.
        columns (list of str): The model's feature columns.
        source (str): The input, for messages.
        input_format (str): :obj:`"csv"`, :obj:`"tsv"`, :obj:`"smi"` or
            :obj:`"sdf"`.

    Raises:
        PredictionError: The input lacks some of the columns or holds one
            twice (the message names them, and the fix); a SMILES or SDF
            input has none.
    """
    if not columns:
        return None
    if input_format not in ('csv', 'tsv'):
        raise PredictionError(
            f"{source} is a {input_format.upper()} file, which gives SMILES "
            f"only, but {_reads(columns)}: predict from a CSV or TSV file "
            f"holding the SMILES and these columns")
    missing = [name for name in columns if name not in header]
    if missing:
        present = ', '.join(repr(name) for name in header)
        raise PredictionError(
            f"{source} has no column(s) {', '.join(map(repr, missing))} "
            f"(columns present: {present}), but {_reads(columns)}: add them "
            f"to the file, with the meaning and units of the training CSV")
    twice = [name for name in columns if list(header).count(name) > 1]
    if twice:
        raise PredictionError(
            f"{source} has more than one column named "
            f"{', '.join(map(repr, twice))}, so which holds the values is "
            f"not known, and {_reads(columns)}: keep one column of each "
            f"name")
    return [list(header).index(name) for name in columns]


def with_features(smiles: Iterable[str], features: Optional[FeatureValues],
                  columns: Sequence[str]) -> Iterable[Molecule]:
    r"""The molecules to predict: :obj:`smiles` as they are for a model
    without feature :obj:`columns`, else each SMILES paired with its row of
    :obj:`features` (:data:`FeatureValues`). Checked here, before any work:
    the presence of :obj:`features`, its columns, and its length when both
    it and :obj:`smiles` have one; checked while streaming: each row's
    length, and the count of rows of an iterator.

    Raises:
        PredictionError: :obj:`features` missing for a model that reads
            columns (the message names them), given for one that reads
            none, or not one row of the columns per SMILES.
    """
    if not columns:
        if features is not None:
            raise PredictionError(
                "features= gives the values of feature columns, but this "
                "model reads none (it was trained without "
                "data.feature_columns); drop the argument")
        return smiles
    if features is None:
        raise PredictionError(
            f"SMILES alone cannot be predicted: {_reads(columns)}. Pass "
            f"each molecule's values as features= (a mapping column -> "
            f"values, or one row per molecule in the order "
            f"{', '.join(columns)}), or predict from a CSV or TSV file "
            f"holding these columns (predict_file; scripts/predict.py "
            f"--input)")
    if isinstance(features, (str, bytes)):
        raise PredictionError(
            f"features= must be a mapping column -> values or one row of "
            f"values per molecule, not a string ({_reads(columns)})")
    if hasattr(features, 'keys'):  # A mapping, or a pandas DataFrame.
        keys = list(features.keys())
        missing = [name for name in columns if name not in keys]
        if missing:
            raise PredictionError(
                f"features= has no column(s) "
                f"{', '.join(map(repr, missing))}, but {_reads(columns)}; "
                f"give every one")
        values = [features[name] for name in columns]
        sizes = {len(v) for v in values if isinstance(v, Sized)}
        if len(sizes) > 1:
            raise PredictionError(
                f"The columns of features= have different lengths "
                f"({sorted(sizes)}); give one value per molecule in each")
        rows: Iterable[Sequence[Any]] = zip(*values)
        count = next(iter(sizes), None)
    else:
        rows = features
        count = len(features) if isinstance(features, Sized) else None
    if count is not None and isinstance(smiles, Sized) and \
            count != len(smiles):
        raise PredictionError(
            f"features= holds values for {count} molecules but "
            f"{len(smiles)} SMILES are given; give one row per molecule")
    return _paired(smiles, rows, columns)


def _paired(smiles: Iterable[str], rows: Iterable[Sequence[Any]],
            columns: Sequence[str]) -> Iterator[Molecule]:
    rows = iter(rows)
    for k, text in enumerate(smiles):
        row = next(rows, _END)
        if row is _END:
            raise PredictionError(
                f"features= ends after {k} molecules but there are more "
                f"SMILES; give one row per molecule")
        if isinstance(row, (str, bytes)) or not isinstance(row, Sized) \
                or len(row) != len(columns):
            raise PredictionError(
                f"Row {k} of features= is {row!r}; each row holds one value "
                f"per feature column: {', '.join(columns)}")
        yield WithColumns(text, list(row))
    if next(rows, _END) is not _END:
        raise PredictionError("features= holds more rows than there are "
                              "SMILES; give one row per molecule")
