r"""The molecules of a training run's report as its model reads them
(:func:`report_molecules`): the SMILES alone, or, for a model trained with
CSV :obj:`data.feature_columns`, each with its row's values of those
columns, which :obj:`test_predictions.csv` does not carry: they are looked
up in the run's :obj:`split.csv` (the CSV rows the run used), by the
molecule's id, and used only if that row has the molecule's SMILES."""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Optional

from .page import esc

__all__ = ['report_molecules']


def report_molecules(rows: list[dict[str, str]], smiles_key: str,
                     run_dir: Path, columns: list[str]
                     ) -> tuple[Optional[list], str]:
    r"""What :func:`~.contributions.atom_contributions` takes for
    :obj:`rows`: their SMILES, each with its values of :obj:`columns`
    (:class:`~graphormer_sepnorm.predict.molecules.WithColumns`) when the
    model reads feature columns; or :obj:`None` and an HTML note that says
    why the values cannot be found.

    Args:
        rows (list of dict): Rows of :obj:`test_predictions.csv` (an id
            column, :obj:`smiles_key`, ...).
        smiles_key (str): Their SMILES column.
        run_dir (Path): The run directory (its :obj:`config.yaml` names
            :obj:`data.id_column` and :obj:`data.smiles_column`; its
            :obj:`split.csv` holds the columns).
        columns (list of str): The model's feature columns (empty: none).
    """
    from ..data.csv_splits import SPLIT_FILE
    from ..predict.molecules import WithColumns
    from .run_smiles import data_config

    smiles = [row[smiles_key] for row in rows]
    if not columns:
        return smiles, ''
    if all(name in rows[0] for name in columns):
        return [WithColumns(s, [row[c] for c in columns])
                for s, row in zip(smiles, rows)], ''
    data = data_config(run_dir)
    id_column = data.get('id_column')
    smiles_column = data.get('smiles_column') or 'smiles'
    split_file = run_dir / SPLIT_FILE
    cannot = (f'<p class="note">No atom shading: the model reads the '
              f'feature column(s) {esc(", ".join(columns))} beside the '
              f'SMILES, and {{}}.</p>')
    if not split_file.is_file():
        return None, cannot.format(
            f'the run directory has no {SPLIT_FILE} to read their values '
            f'from')
    with open(split_file, newline='', encoding='utf-8') as f:
        table = list(csv.DictReader(f))
    missing = [c for c in [*columns, smiles_column] if table and c not in
               table[0]]
    if not table or missing:
        return None, cannot.format(
            f'{esc(str(split_file))} lacks the column(s) '
            f'{esc(", ".join(missing) or "(empty file)")}')
    key = id_column or 'id'
    found = []
    for text, row in zip(smiles, rows):
        match = _find(table, row.get(key), id_column, smiles_column, text)
        if match is None:
            return None, cannot.format(
                f'{esc(str(split_file))} has no row with {esc(key)} '
                f'{esc(row.get(key))} and SMILES {esc(text)}')
        found.append(WithColumns(text, [match[c] for c in columns]))
    return found, (f'<p class="note">Feature-column values read from '
                   f'{esc(str(split_file))} by {esc(key)}.</p>')


def _find(table: list[dict[str, str]], key: Optional[str],
          id_column: Optional[str], smiles_column: str, smiles: str
          ) -> Optional[dict[str, str]]:
    r"""The row of :obj:`table` with id :obj:`key` (the value of
    :obj:`id_column`, or without one the row's position) and SMILES
    :obj:`smiles`; :obj:`None` if there is none."""
    if key is None:
        return None
    if id_column is None:
        try:
            candidates = [table[int(key)]] if 0 <= int(key) < len(table) \
                else []
        except ValueError:
            return None
    else:
        candidates = [row for row in table if row[id_column] == key]
    return next((row for row in candidates
                 if row[smiles_column] == smiles), None)
