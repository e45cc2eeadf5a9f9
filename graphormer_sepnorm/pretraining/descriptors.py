r"""The graph-level pretraining targets: RDKit 2D descriptors of each
molecule, computed from its structure alone, standardized with statistics of
the corpus.

The graph token learns to predict them (as chemprop's CheMeleon learns
Mordred descriptors). No downstream label and no formula of one is among
them: ZINC's target is penalized logP, Crippen logP minus the synthetic
accessibility score minus long cycles, so Crippen's logP, every descriptor
built from Crippen's atom contributions (molar refractivity, the
``SlogP_VSA``/``SMR_VSA`` bins, the logP and MR BCUTs), QED (which contains
a logP) and any SA score are left out (:data:`EXCLUDED`). The descriptors
are also cheap, so that they can be computed while training streams the
corpus: Gasteiger charges and the electrotopological-state bins, which cost
more than all of these together, are not used.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from rdkit import Chem
from rdkit.Chem import Descriptors

__all__ = ['DESCRIPTOR_NAMES', 'EXCLUDED', 'descriptor_values',
           'DescriptorScaler']

#: The descriptors, by their name in :obj:`rdkit.Chem.Descriptors`.
DESCRIPTOR_NAMES: tuple[str, ...] = (
    # Size and composition
    'MolWt', 'HeavyAtomCount', 'NumHeteroatoms', 'NOCount', 'NHOHCount',
    'FractionCSP3',
    # Hydrogen bonding, flexibility, polarity
    'NumHDonors', 'NumHAcceptors', 'NumRotatableBonds', 'NumAmideBonds',
    'TPSA', 'LabuteASA',
    # Rings
    'RingCount', 'NumAromaticRings', 'NumAliphaticRings',
    'NumSaturatedRings', 'NumAromaticHeterocycles', 'NumAromaticCarbocycles',
    'NumAliphaticHeterocycles', 'NumSaturatedHeterocycles', 'NumSpiroAtoms',
    'NumBridgeheadAtoms', 'NumAtomStereoCenters',
    # Topology (Kier and Hall)
    'HallKierAlpha', 'Kappa1', 'Kappa2', 'Chi0v', 'Chi1v', 'Chi2v',
    # Functional groups
    'fr_benzene', 'fr_amide', 'fr_ether', 'fr_halogen', 'fr_Ar_N', 'fr_NH1',
    'fr_C_O', 'fr_sulfonamd', 'fr_ester', 'fr_aniline',
)

#: Left out on purpose: the ZINC benchmark's label is built from Crippen
#: logP and the SA score (see the module docstring).
EXCLUDED: tuple[str, ...] = (
    'MolLogP', 'MolMR', 'qed', 'BCUT2D_LOGPHI', 'BCUT2D_LOGPLOW',
    'BCUT2D_MRHI', 'BCUT2D_MRLOW',
    *(f'SlogP_VSA{i}' for i in range(1, 13)),
    *(f'SMR_VSA{i}' for i in range(1, 11)),
)

_FUNCTIONS = dict(Descriptors.descList)


def _check_names(names: Sequence[str]) -> None:
    excluded = [name for name in names if name in EXCLUDED]
    if excluded:
        raise ValueError(
            f"descriptor(s) {', '.join(excluded)} are excluded from the "
            f"pretraining targets (ZINC's label, penalized logP, is built "
            f"from Crippen logP and the SA score; see EXCLUDED); choose "
            f"others, e.g. from DESCRIPTOR_NAMES")
    unknown = [name for name in names if name not in _FUNCTIONS]
    if unknown:
        raise ValueError(
            f"unknown RDKit descriptor(s) {', '.join(map(repr, unknown))}; "
            f"names are those of rdkit.Chem.Descriptors.descList, e.g. "
            f"{', '.join(DESCRIPTOR_NAMES[:3])}")


def descriptor_values(mol: Chem.Mol,
                      names: Sequence[str] = DESCRIPTOR_NAMES) -> np.ndarray:
    r"""The descriptors :obj:`names` of :obj:`mol` as float64, NaN where
    RDKit cannot compute one (*e.g.* a Gasteiger charge of an unusual
    atom).

    Args:
        mol (rdkit.Chem.Mol): The molecule.
        names (sequence of str, optional): Names in
            :obj:`rdkit.Chem.Descriptors`, none of :data:`EXCLUDED`.
            (default: :data:`DESCRIPTOR_NAMES`)

    Raises:
        ValueError: A name is excluded (a downstream label is built from
            it) or is no RDKit descriptor.
    """
    if names is not DESCRIPTOR_NAMES:
        _check_names(names)
    values = np.empty(len(names), dtype=np.float64)
    for i, name in enumerate(names):
        try:
            value = float(_FUNCTIONS[name](mol))
        except (ValueError, RuntimeError, ZeroDivisionError):
            value = math.nan
        values[i] = value if math.isfinite(value) else math.nan
    return values


class DescriptorScaler:
    r"""Standardizes descriptors with a mean and standard deviation measured
    on molecules of the corpus, clipped to :obj:`clip` standard deviations
    (a few descriptors have heavy tails), missing values as NaN (left out
    of the loss).

    Args:
        mean (Sequence[float]): Per descriptor.
        std (Sequence[float]): Per descriptor (a zero is replaced by one:
            a constant descriptor then standardizes to zero).
        clip (float, optional): Largest absolute standardized value.
            (default: :obj:`6.0`)
    """
    def __init__(self, mean: Sequence[float], std: Sequence[float],
                 clip: float = 6.0) -> None:
        self.mean = np.asarray(mean, dtype=np.float64)
        std = np.asarray(std, dtype=np.float64)
        self.std = np.where(std > 0, std, 1.0)
        self.clip = float(clip)

    @classmethod
    def fit(cls, values: np.ndarray, clip: float = 6.0) -> 'DescriptorScaler':
        r"""The scaler of :obj:`values` :obj:`[num_molecules,
        num_descriptors]` (NaNs ignored)."""
        return cls(np.nanmean(values, axis=0), np.nanstd(values, axis=0),
                   clip)

    def transform(self, values: np.ndarray) -> np.ndarray:
        r"""Standardized, clipped :obj:`values` as float32 (NaN kept)."""
        scaled = (values - self.mean) / self.std
        return np.clip(scaled, -self.clip, self.clip).astype(np.float32)

    def state_dict(self) -> dict:
        return {'mean': self.mean.tolist(), 'std': self.std.tolist(),
                'clip': self.clip}

    @classmethod
    def from_state_dict(cls, state: dict) -> 'DescriptorScaler':
        return cls(state['mean'], state['std'], state['clip'])
