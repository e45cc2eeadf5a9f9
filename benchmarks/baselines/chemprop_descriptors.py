r"""Per-molecule extra descriptors for the chemprop baseline, as
``chemprop train --molecule-featurizers NAME [NAME ...]`` (chemprop 2.3)
adds them: each molecule's vector is the concatenation of the named
featurizers of chemprop's :obj:`MoleculeFeaturizerRegistry` applied to its
RDKit molecule (a :obj:`NaN` becomes 0, as in chemprop's datapoints); the
training split's descriptors are standardized with a scikit-learn
:class:`~sklearn.preprocessing.StandardScaler` fitted on them, the
validation split's with the same scaler, and the model gets that scaler as
its :obj:`X_d_transform` (which scales only in evaluation mode, i.e. the
raw descriptors it predicts from); the feed-forward head's input grows by
the number of descriptor columns."""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
from chemprop.featurizers.molecule import MoleculeFeaturizerRegistry
from chemprop.nn.transforms import ScaleTransform
from rdkit import Chem

__all__ = ['featurizer_names', 'check_featurizer_names',
           'molecule_featurizers', 'molecule_descriptors',
           'check_float32_range', 'scale_descriptors']


def featurizer_names() -> list[str]:
    r"""The names of chemprop's molecule featurizers (its registry)."""
    return sorted(MoleculeFeaturizerRegistry)


def check_featurizer_names(names: Sequence[str]) -> None:
    r"""Raises :class:`ValueError` unless :obj:`names` are distinct names
    of chemprop's molecule featurizers (the message lists the valid ones).

    Args:
        names (Sequence[str]): Registry names, e.g. :obj:`["rdkit_2d"]`.
    """
    unknown = [n for n in names if n not in MoleculeFeaturizerRegistry]
    if unknown:
        raise ValueError(f"unknown molecule featurizer {unknown[0]!r}; "
                         f"choose from {', '.join(featurizer_names())}")
    if len(set(names)) != len(names):
        raise ValueError(f"molecule featurizers named twice: {list(names)}")


def molecule_featurizers(names: Sequence[str]) -> list:
    r"""chemprop's molecule featurizers by registry name, in order.

    Args:
        names (Sequence[str]): Registry names, e.g. :obj:`["rdkit_2d"]`.

    Raises:
        ValueError: See :func:`check_featurizer_names`.
    """
    check_featurizer_names(names)
    return [MoleculeFeaturizerRegistry[name]() for name in names]


def molecule_descriptors(featurizers: Sequence, mol: Chem.Mol
                         ) -> Optional[np.ndarray]:
    r"""The extra descriptors of one molecule: the outputs of
    :obj:`featurizers` concatenated (:obj:`None` without featurizers).

    Args:
        featurizers (Sequence): From :func:`molecule_featurizers`.
        mol (rdkit.Chem.Mol): The molecule, as chemprop parses it.
    """
    if not featurizers:
        return None
    return np.hstack([f(mol) for f in featurizers]).astype(np.float64)


def check_float32_range(datasets: dict) -> None:
    r"""Raises :class:`ValueError` if a split's raw descriptors hold an
    infinity or a value beyond float32's range (RDKit 2D descriptors do on
    large molecules: :obj:`Ipc` up to about 1e84, an infinite
    :obj:`MaxPartialCharge`): scikit-learn's scaler refuses infinities,
    and chemprop's float32 batches and :obj:`X_d_transform` would turn the
    others into infinities and the model's predictions into :obj:`NaN`.

    Args:
        datasets (dict): chemprop :class:`~chemprop.data.MoleculeDataset`
            per split, with unscaled descriptors.
    """
    limit = np.finfo(np.float32).max
    for split, dataset in datasets.items():
        bad = ~(np.abs(dataset.X_d) <= limit)
        if bad.any():
            columns = np.flatnonzero(bad.any(axis=0))
            raise ValueError(
                f"{int(bad.any(axis=1).sum())} {split} molecules have "
                f"descriptors that are infinite or beyond float32's range "
                f"(columns {', '.join(map(str, columns[:5]))} of "
                f"{dataset.d_xd}), which chemprop cannot scale; choose "
                f"other molecule featurizers (e.g. v1_rdkit_2d_normalized "
                f"instead of rdkit_2d)")


def scale_descriptors(datasets: dict) -> Optional[ScaleTransform]:
    r"""Checks the descriptors (:func:`check_float32_range`), then
    standardizes those of :obj:`datasets["train"]` with a
    scaler fitted on them and those of :obj:`datasets["val"]` with the same
    scaler (in place, as ``chemprop train`` does; the test split stays raw),
    and returns the model's :obj:`X_d_transform` (:obj:`None` without
    descriptors).

    Args:
        datasets (dict): chemprop :class:`~chemprop.data.MoleculeDataset`
            per split (``train``, ``val``, ``test``).
    """
    if datasets['train'].d_xd == 0:
        return None
    check_float32_range(datasets)
    scaler = datasets['train'].normalize_inputs('X_d')
    datasets['val'].normalize_inputs('X_d', scaler)
    return ScaleTransform.from_standard_scaler(scaler)
