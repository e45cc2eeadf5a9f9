r"""SMILES parsing with RDKit (its logging silenced) and the
:class:`FeaturizationError` messages that name the offending SMILES, the
problem, and what to do about it."""
from __future__ import annotations

import contextlib
from typing import Iterator

from rdkit import Chem, RDLogger, rdBase

__all__ = ['FeaturizationError']


class FeaturizationError(ValueError):
    r"""Raised when a SMILES string cannot be turned into a model input graph.

    The message names the offending SMILES, what is wrong with it, and how to
    fix it.  Being a :class:`ValueError`, it can be caught as such.
    """


@contextlib.contextmanager
def _silence_rdkit() -> Iterator[None]:
    r"""Silences RDKit's own logging (``rdApp.*``) inside a :obj:`with` block
    and afterwards restores exactly the log levels that were enabled before.
    """
    levels = ('debug', 'info', 'warning', 'error')
    try:  # Lines like "rdApp.warning:enabled":
        status = rdBase.LogStatus().splitlines()
        enabled = [
            line.split(':')[0] for line in status
            if line.strip().endswith(':enabled')
        ]
    except Exception:  # pragma: no cover - very old RDKit
        enabled = [f'rdApp.{level}' for level in levels if level != 'debug']
    RDLogger.DisableLog('rdApp.*')
    try:
        yield
    finally:
        for name in enabled:
            RDLogger.EnableLog(name)


def _quiet_rdkit() -> contextlib.AbstractContextManager:
    r"""A context that silences RDKit's logging: RDKit's own
    :class:`rdBase.BlockLogs` (restores the previous levels when it is
    released; about 1 µs instead of about 20 µs for :func:`_silence_rdkit`),
    or :func:`_silence_rdkit` on RDKit versions without it.
    """
    if _BlockLogs is None:  # pragma: no cover - RDKit < 2022.03
        return _silence_rdkit()
    return _BlockLogsContext()


_BlockLogs = getattr(rdBase, 'BlockLogs', None)


class _BlockLogsContext:
    __slots__ = ('_block', )

    def __enter__(self) -> None:
        self._block = _BlockLogs()

    def __exit__(self, *exc: object) -> None:
        block, self._block = self._block, None
        del block  # Re-enables exactly the levels it disabled.


def _check_smiles(smiles: object) -> str:
    r"""Validates the type and emptiness of :obj:`smiles` and returns it
    stripped of surrounding whitespace.
    """
    if not isinstance(smiles, str):
        raise FeaturizationError(
            f"Expected a SMILES string, but got an object of type "
            f"'{type(smiles).__name__}' ({smiles!r}); pass the molecule as a "
            f"SMILES string, e.g. 'CCO'")
    stripped = smiles.strip()
    if len(stripped) == 0:
        raise FeaturizationError(
            f"SMILES {smiles!r} is empty or whitespace only; pass a "
            f"non-empty SMILES string, e.g. 'CCO'")
    return stripped


def _parse_smiles(smiles: object, max_nodes: int | None) -> Chem.Mol:
    r"""Parses :obj:`smiles` with RDKit (with sanitization, RDKit's logging
    silenced) and checks that the molecule has between one and
    :obj:`max_nodes` heavy atoms.
    """
    text = _check_smiles(smiles)
    with _quiet_rdkit():
        mol = Chem.MolFromSmiles(text)
        if mol is None:
            raise FeaturizationError(_explain_parse_failure(text))
    num_atoms = mol.GetNumAtoms()
    if num_atoms == 0:
        raise FeaturizationError(
            f"SMILES {text!r} describes a molecule with zero atoms; pass a "
            f"SMILES string with at least one atom")
    if max_nodes is not None and num_atoms > max_nodes:
        raise FeaturizationError(
            f"SMILES {text!r} has {num_atoms} heavy atoms, more than the "
            f"maximum of max_nodes={max_nodes} this model supports; use a "
            f"smaller molecule (or a model trained with a larger node limit)")
    return mol


def _explain_parse_failure(text: str) -> str:
    r"""Builds the error message for a SMILES that RDKit failed to parse.
    Must be called with RDKit logging silenced.
    """
    reason = 'it is not valid SMILES syntax'
    mol = Chem.MolFromSmiles(text, sanitize=False)
    if mol is not None:  # Syntax is fine; the chemistry is not:
        problems = Chem.DetectChemistryProblems(mol)
        if len(problems) > 0:
            reason = ('RDKit rejects its chemistry: ' +
                      '; '.join(p.Message() for p in problems))
        else:
            reason = 'RDKit could not sanitize the molecule'
    return (f"SMILES {text!r} could not be parsed by RDKit ({reason}); "
            f"check the SMILES string for typos, unclosed rings or "
            f"impossible valences")
