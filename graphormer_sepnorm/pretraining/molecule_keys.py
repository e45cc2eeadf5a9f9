r"""The identity of a molecule, three ways: RDKit's canonical isomeric
SMILES (what the featurizers use), its standard InChIKey, and the InChIKey's
first block (the connectivity hash: same skeleton and hydrogens, any
stereochemistry, isotopes or protonation).

Standard InChI treats mobile hydrogens as one layer, so some tautomers that
have different canonical SMILES share an InChIKey (2-hydroxypyridine and
2-pyridone); the first block also equates stereoisomers and the molecule
without stereo marks.

Computing them is the slow part of building a corpus (about 0.35 ms per
molecule, mostly InChI), so :func:`iter_molecule_keys` spreads it over worker
processes in chunks, in order, with a progress bar.
"""
from __future__ import annotations

import multiprocessing
import time
from typing import Iterator, NamedTuple, Optional, Sequence

__all__ = ['MoleculeKeys', 'molecule_keys', 'iter_molecule_keys']


class MoleculeKeys(NamedTuple):
    r"""The canonical SMILES and standard InChIKey of one molecule
    (:attr:`inchikey` is empty if InChI failed)."""
    smiles: str
    inchikey: str

    @property
    def connectivity(self) -> str:
        r"""The InChIKey's first block (14 letters), empty without one."""
        return self.inchikey[:14]


def molecule_keys(smiles: str) -> Optional[MoleculeKeys]:
    r"""The :class:`MoleculeKeys` of :obj:`smiles`, or :obj:`None` if RDKit
    cannot parse it. RDKit's own messages are not printed."""
    from rdkit import Chem
    from rdkit.rdBase import BlockLogs
    with BlockLogs():
        mol = Chem.MolFromSmiles(smiles)
        if mol is None:
            return None
        return MoleculeKeys(Chem.MolToSmiles(mol), Chem.MolToInchiKey(mol))


def _keys_of_chunk(chunk: Sequence[str]) -> list[Optional[MoleculeKeys]]:
    return [molecule_keys(s) for s in chunk]


def iter_molecule_keys(smiles: Sequence[str], processes: int = 1,
                       chunk_size: int = 2000, progress: bool = True,
                       desc: str = 'Canonicalizing'
                       ) -> Iterator[Optional[MoleculeKeys]]:
    r"""Yields :func:`molecule_keys` of every entry of :obj:`smiles`, in
    order, and prints the throughput when done.

    Args:
        smiles (sequence of str): The molecules.
        processes (int, optional): Worker processes; 1 computes in this
            process. (default: :obj:`1`)
        chunk_size (int, optional): Molecules sent to a worker at once.
            (default: :obj:`2000`)
        progress (bool, optional): Show a progress bar (molecules/s).
            (default: :obj:`True`)
        desc (str, optional): The progress bar's label.
    """
    from tqdm.auto import tqdm
    if processes < 1:
        raise ValueError(f"processes must be at least 1, not {processes}")
    chunks = (smiles[i:i + chunk_size]
              for i in range(0, len(smiles), chunk_size))
    start = time.perf_counter()
    with tqdm(total=len(smiles), unit='mol', desc=desc, smoothing=0.1,
              disable=None if progress else True) as bar:
        if processes == 1:
            for chunk in chunks:
                keys = _keys_of_chunk(chunk)
                bar.update(len(keys))
                yield from keys
        else:
            # Spawned, not forked: a worker forked while one of this
            # process's threads (a progress bar's monitor, a pool's
            # handlers) held a lock can hang at its exit, and the pool with
            # it (seen in CI on two loaded cores).
            with multiprocessing.get_context('spawn').Pool(processes) as pool:
                for keys in pool.imap(_keys_of_chunk, chunks):
                    bar.update(len(keys))
                    yield from keys
    elapsed = time.perf_counter() - start
    if progress:
        print(f"{desc}: {len(smiles):,} molecules in {elapsed:.0f} s "
              f"({len(smiles) / max(elapsed, 1e-9):,.0f} molecules/s, "
              f"{processes} process{'es' if processes > 1 else ''})")
