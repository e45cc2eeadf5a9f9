r"""Molecule-level features for the graph token
(:obj:`model.graph_feature_channels`): one float vector per molecule,
computed from its SMILES (and, for a CSV, from its own numeric columns)
by the featurizers named in :obj:`data.molecule_features`, in this order:

* ``rdkit2d``: the 39 RDKit 2D descriptors of
  :data:`~graphormer_sepnorm.pretraining.descriptors.DESCRIPTOR_NAMES` (the
  pretraining's descriptor targets: cheap, and none is a formula of a
  benchmark label), standardized;
* ``morgan``: Morgan count fingerprint (RDKit's
  :obj:`rdFingerprintGenerator`, radius :obj:`data.morgan_radius`,
  :obj:`data.morgan_size` entries), raw counts;
* then the CSV columns :obj:`data.feature_columns`, standardized.

The molecule is read in canonical atom order (as the graph featurizers read
it), so two spellings of one molecule get the same features. The
standardization (mean and standard deviation of the training split,
clipped at 6 standard deviations, :class:`~graphormer_sepnorm.pretraining.
descriptors.DescriptorScaler`) is fitted once on the training split and
saved in the model card (:meth:`MoleculeFeaturizer.state_dict`), from which
prediction rebuilds the same featurizer: the same function computes the
features in training and in prediction.

**Failures.** A molecule whose features cannot all be computed (RDKit
cannot read it, a descriptor raises or is not finite, a feature column is
empty or not a finite number) is rejected, never filled in:
:meth:`MoleculeFeaturizer.raw` raises
:class:`~graphormer_sepnorm.data.featurize.FeaturizationError` naming the
descriptor or column. Training leaves the molecule out (a CSV lists it in
``skipped_rows.csv``), prediction gives it an error row and predicts the
others.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import numpy as np

from .featurize.smiles import FeaturizationError

__all__ = ['MOLECULE_FEATURIZERS', 'MoleculeFeaturizer', 'molecule_featurizer',
           'graph_feature_channels', 'card_molecule_featurizer']

#: The featurizers :obj:`data.molecule_features` may name, in the order
#: their blocks take in the vector (the CSV columns come last).
MOLECULE_FEATURIZERS = ('rdkit2d', 'morgan')

#: Clip of the standardized channels, in standard deviations.
CLIP = 6.0


class MoleculeFeaturizer:
    r"""Computes the molecule-feature vector of a SMILES.

    Args:
        featurizers (sequence of str): Names from
            :data:`MOLECULE_FEATURIZERS` (each at most once).
        morgan_radius (int, optional): Radius of the Morgan fingerprint.
            (default: :obj:`2`)
        morgan_size (int, optional): Entries of the Morgan fingerprint.
            (default: :obj:`2048`)
        feature_columns (sequence of str, optional): Numeric columns of a
            CSV, appended after the featurizers' blocks.
            (default: :obj:`()`)
        scaler (dict, optional): The standardization of the scaled
            channels (:meth:`fit`; as :meth:`state_dict` saves it);
            :obj:`None` until fitted. (default: :obj:`None`)

    Raises:
        ValueError: An unknown or repeated featurizer name, or a Morgan
            radius or size below 1, or nothing to compute.
    """
    def __init__(self, featurizers: Sequence[str], morgan_radius: int = 2,
                 morgan_size: int = 2048,
                 feature_columns: Sequence[str] = (),
                 scaler: Optional[Mapping[str, Any]] = None) -> None:
        from ..pretraining.descriptors import (DESCRIPTOR_NAMES,
                                               DescriptorScaler)
        names = [str(name).strip().lower() for name in featurizers]
        unknown = [n for n in names if n not in MOLECULE_FEATURIZERS]
        if unknown or len(set(names)) != len(names):
            raise ValueError(
                f"data.molecule_features must name each of "
                f"{', '.join(MOLECULE_FEATURIZERS)} at most once, got "
                f"{list(featurizers)}")
        if int(morgan_radius) < 1 or int(morgan_size) < 1:
            raise ValueError(
                f"data.morgan_radius and data.morgan_size must be at least 1, "
                f"got {morgan_radius} and {morgan_size}")
        self.featurizers = [n for n in MOLECULE_FEATURIZERS if n in names]
        self.morgan_radius = int(morgan_radius)
        self.morgan_size = int(morgan_size)
        self.feature_columns = [str(c) for c in feature_columns]
        self.descriptors = (list(DESCRIPTOR_NAMES)
                            if 'rdkit2d' in self.featurizers else [])
        if not self.channels:
            raise ValueError("No molecule features: name featurizers in "
                             "data.molecule_features or columns in "
                             "data.feature_columns")
        # Standardized: the descriptors and the CSV columns; the Morgan
        # counts stay counts.
        morgan = self.morgan_size if 'morgan' in self.featurizers else 0
        self.scaled = np.concatenate([
            np.arange(len(self.descriptors)),
            len(self.descriptors) + morgan +
            np.arange(len(self.feature_columns))]).astype(np.int64)
        self.scaler = (None if scaler is None else
                       DescriptorScaler.from_state_dict(scaler))
        self._generator = None

    @property
    def channels(self) -> int:
        r"""The length of the vector (:obj:`model.graph_feature_channels`)."""
        return (len(self.descriptors) + len(self.feature_columns) +
                (self.morgan_size if 'morgan' in self.featurizers else 0))

    def raw(self, smiles: str,
            columns: Optional[Sequence[Any]] = None) -> np.ndarray:
        r"""The unstandardized vector, float64 :obj:`[channels]`.

        Args:
            smiles (str): The molecule.
            columns (sequence, optional): Its values of
                :obj:`feature_columns`, in order (text or numbers); needed
                when there are feature columns. (default: :obj:`None`)

        Raises:
            FeaturizationError: The molecule is rejected (see the module
                documentation); the message says why.
        """
        blocks = []
        if self.featurizers:
            from .featurize.canonical import parse_canonical
            _, mol = parse_canonical(smiles)
            if self.descriptors:
                blocks.append(self._descriptors(smiles, mol))
            if 'morgan' in self.featurizers:
                blocks.append(self._morgan(mol))
        if self.feature_columns:
            blocks.append(self._columns(smiles, columns))
        return np.concatenate(blocks)

    def _descriptors(self, smiles: str, mol) -> np.ndarray:
        from ..pretraining.descriptors import descriptor_values
        values = descriptor_values(mol, self.descriptors)
        failed = [self.descriptors[i] for i in np.flatnonzero(
            ~np.isfinite(values))]
        if failed:
            raise FeaturizationError(
                f"SMILES {smiles!r}: RDKit descriptor(s) "
                f"{', '.join(failed)} cannot be computed (an error or a "
                f"value that is not finite), so the molecule has no rdkit2d "
                f"features and is left out; train and predict without "
                f"rdkit2d to keep it")
        return values

    def _morgan(self, mol) -> np.ndarray:
        if self._generator is None:
            from rdkit.Chem import rdFingerprintGenerator
            self._generator = rdFingerprintGenerator.GetMorganGenerator(
                radius=self.morgan_radius, fpSize=self.morgan_size)
        return self._generator.GetCountFingerprintAsNumPy(mol).astype(
            np.float64)

    def _columns(self, smiles: str,
                 columns: Optional[Sequence[Any]]) -> np.ndarray:
        if columns is None or len(columns) != len(self.feature_columns):
            raise FeaturizationError(
                f"SMILES {smiles!r}: the model reads the feature column(s) "
                f"{', '.join(self.feature_columns)} beside the SMILES; give "
                f"their values for every molecule")
        values = np.empty(len(columns), dtype=np.float64)
        for k, (name, cell) in enumerate(zip(self.feature_columns, columns)):
            try:
                values[k] = float(str(cell).strip())
            except ValueError:
                values[k] = np.nan
            if not np.isfinite(values[k]):
                raise FeaturizationError(
                    f"SMILES {smiles!r}: feature column {name!r} holds "
                    f"{cell!r}, not a finite number, so the molecule has no "
                    f"features (write a number there to train on it or "
                    f"predict it)")
        return values

    def fit(self, raw: np.ndarray) -> 'MoleculeFeaturizer':
        r"""Fits the standardization on :obj:`raw` :obj:`[num_molecules,
        len(scaled)]`, the float64 scaled channels (:attr:`scaled`) of the
        training split's :meth:`raw` vectors, and returns this
        featurizer."""
        from ..pretraining.descriptors import DescriptorScaler
        if len(raw) == 0:
            raise ValueError("No training molecule has molecule features "
                             "to fit their standardization on")
        self.scaler = DescriptorScaler.fit(
            np.asarray(raw, dtype=np.float64), CLIP)
        return self

    def transform(self, raw: np.ndarray,
                  scaled_raw: Optional[np.ndarray] = None) -> np.ndarray:
        r"""The model's input, float32, of :meth:`raw` vectors (one vector
        or a :obj:`[num_molecules, channels]` matrix): the scaled
        channels standardized and clipped, elementwise (a molecule's
        features do not depend on the others of its batch), the others
        as they are.

        Args:
            raw (numpy.ndarray): :meth:`raw` vectors.
            scaled_raw (numpy.ndarray, optional): The float64 values of the
                scaled channels, when :obj:`raw` holds them in lower
                precision (a cache keeps the counts as float32).
                (default: :obj:`None`: read from :obj:`raw`)
        """
        if self.scaler is None and len(self.scaled):
            raise ValueError("The molecule features' standardization is not "
                             "fitted; call fit() on the training split")
        out = np.array(raw, dtype=np.float32)
        if len(self.scaled):
            source = raw[..., self.scaled] if scaled_raw is None \
                else scaled_raw
            out[..., self.scaled] = self.scaler.transform(
                np.asarray(source, dtype=np.float64))
        return out

    def __call__(self, smiles: str,
                 columns: Optional[Sequence[Any]] = None) -> np.ndarray:
        r""":meth:`transform` of :meth:`raw`."""
        return self.transform(self.raw(smiles, columns))

    def settings(self) -> dict[str, Any]:
        r"""What defines the features, without the fitted statistics."""
        return {'featurizers': list(self.featurizers),
                'descriptors': list(self.descriptors),
                'morgan_radius': self.morgan_radius,
                'morgan_size': self.morgan_size,
                'feature_columns': list(self.feature_columns),
                'channels': self.channels}

    def state_dict(self) -> dict[str, Any]:
        r"""Everything that rebuilds this featurizer
        (:meth:`from_state_dict`): :meth:`settings`, the standardized
        channels, the fitted statistics (:obj:`scaler`: :obj:`mean`,
        :obj:`std` and :obj:`clip`, one entry per standardized channel) and
        the RDKit version that computed them."""
        from rdkit import __version__ as rdkit_version
        return {**self.settings(), 'scaled_channels': self.scaled.tolist(),
                'scaler': (None if self.scaler is None
                           else self.scaler.state_dict()),
                'policy': 'a molecule whose features cannot all be computed '
                          'is rejected (left out of training, an error row '
                          'in prediction)',
                'rdkit': rdkit_version}

    @classmethod
    def from_state_dict(cls, state: Mapping[str, Any]
                        ) -> 'MoleculeFeaturizer':
        r"""The featurizer a model card describes (:meth:`state_dict`).

        Raises:
            ValueError: The card names descriptors other than this
                version's (a model from another version).
        """
        featurizer = cls(state['featurizers'], state['morgan_radius'],
                         state['morgan_size'], state['feature_columns'],
                         state.get('scaler'))
        if list(state.get('descriptors', [])) != featurizer.descriptors:
            raise ValueError(
                "The model's card lists other rdkit2d descriptors than this "
                "version computes; predict with the graphormer-sepnorm "
                "version that trained it")
        return featurizer


def card_molecule_featurizer(card: Any, source: Optional[str] = None
                             ) -> Optional[MoleculeFeaturizer]:
    r"""The fitted featurizer a model card describes
    (:obj:`extra["molecule_features"]`), from which prediction computes
    the features the model was trained with; :obj:`None` for a model
    without molecule features.

    A model trained with CSV :obj:`data.feature_columns` reads them
    beside the SMILES: its featurizer takes each molecule's values of
    :attr:`MoleculeFeaturizer.feature_columns` (see
    :mod:`graphormer_sepnorm.predict.feature_columns`).

    Args:
        card (ModelCard): The model's card.
        source (str, optional): Where the model came from, for messages.
            (default: :obj:`None`)

    Raises:
        CheckpointError: The card's features cannot be rebuilt.
    """
    from ..errors import CheckpointError
    state = (card.extra or {}).get('molecule_features')
    if not state:
        return None
    where = source or 'model'
    try:
        return MoleculeFeaturizer.from_state_dict(state)
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(f"{where}: its molecule features cannot be "
                              f"rebuilt ({error})") from None


def molecule_featurizer(data: Mapping[str, Any]
                        ) -> Optional[MoleculeFeaturizer]:
    r"""The (unfitted) featurizer of a validated :obj:`data` section;
    :obj:`None` without molecule features."""
    names = data.get('molecule_features') or []
    columns = data.get('feature_columns') or []
    if not names and not columns:
        return None
    return MoleculeFeaturizer(names, data.get('morgan_radius', 2),
                              data.get('morgan_size', 2048), columns)


def graph_feature_channels(data: Mapping[str, Any]) -> int:
    r"""The :obj:`model.graph_feature_channels` of a validated :obj:`data`
    section: the length of its molecule-feature vector (0: none)."""
    featurizer = molecule_featurizer(data)
    return 0 if featurizer is None else featurizer.channels
