r"""The SMILES of a built-in dataset run's test molecules
(:func:`add_test_smiles`): its :obj:`test_predictions.csv` has ids only,
so they are looked up in the dataset's files that the run's configuration
names, and used only if those files give every molecule the label the
predictions file gives it."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

from .page import esc

__all__ = ['add_test_smiles', 'data_config', 'SMILES_KEY']

#: The column :func:`add_test_smiles` adds to the rows.
SMILES_KEY = 'smiles'


def add_test_smiles(rows: list[dict[str, str]], label: str, run_dir: Path
                    ) -> tuple[Optional[str], str]:
    r"""Adds :data:`SMILES_KEY` to each row of a built-in dataset run's
    test predictions (:obj:`id`, :obj:`label`, ...) where the dataset's
    SMILES file is found; returns the column's name (:obj:`None`: not
    added) and an HTML note that says where the SMILES came from, or why
    there are none.

    Args:
        rows (list of dict): The rows of :obj:`test_predictions.csv`.
        label (str): Their label column (checked against the file's).
        run_dir (Path): The run directory; its :obj:`config.yaml` names the
            dataset and its folders (:obj:`data.raw_source`,
            :obj:`data.root`, relative to the working directory as in
            training).
    """
    from ..data.datasets.split_smiles import smiles_files, split_molecules
    data = data_config(run_dir)
    name = data.get('name')
    folders = [data[k] for k in ('raw_source', 'root') if data.get(k)]
    missing = ('<p class="note">The test predictions carry no SMILES, so '
               'the molecules are listed by id, not drawn: {}.</p>')
    looked = smiles_files(name, 'test', folders) if name else []
    if 'id' not in rows[0] or not looked:
        return None, missing.format(
            f'the report finds the SMILES of the built-in datasets (MolHIV, '
            f'ZINC), not those of dataset {esc(name or "unknown")}')
    molecules = split_molecules(name, 'test', folders)
    if molecules is None:
        return None, missing.format(
            'none of ' + ', '.join(esc(str(p)) for p in looked) + ' exists '
            '(run the report where the dataset\'s files are)')
    for row in rows:
        k = int(row['id'])
        if not 0 <= k < len(molecules.smiles) or not _same(
                row[label], molecules.labels[k]):
            return None, missing.format(
                f'{esc(str(molecules.path))} does not describe the same '
                f'molecules (id {k}: label {esc(row[label])} here)')
    for row in rows:
        row[SMILES_KEY] = molecules.smiles[int(row['id'])]
    return SMILES_KEY, (f'<p class="note">SMILES looked up by id in '
                        f'{esc(str(molecules.path))} (every test label '
                        f'matches).</p>')


def data_config(run_dir: Path) -> dict:
    r"""The :obj:`data` section of the :obj:`config.yaml` of the run in
    :obj:`run_dir` (empty if there is none)."""
    config = run_dir / 'config.yaml'
    if not config.is_file():
        return {}
    import yaml
    data = (yaml.safe_load(config.read_text()) or {}).get('data')
    return data if isinstance(data, dict) else {}


def _same(text: str, label: float) -> bool:
    r"""Whether a written label equals the file's (both missing counts)."""
    value = float(text) if text else math.nan
    if math.isnan(value) or math.isnan(label):
        return math.isnan(value) and math.isnan(label)
    return abs(value - label) <= 1e-6 * max(1.0, abs(label))
