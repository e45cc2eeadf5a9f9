r"""Train/validation/test splits of a molecule list: scaffold, random, or
given.

Scaffold split (:func:`scaffold_split`). Molecules are grouped by their
Bemis-Murcko scaffold (RDKit's
:func:`~rdkit.Chem.Scaffolds.MurckoScaffold.MurckoScaffoldSmiles`, without
chirality, as chemprop; acyclic molecules share the empty scaffold), and
whole groups are assigned, so that no scaffold is in two splits. The order
follows the *balanced* convention of chemprop's ``scaffold_balanced``: the
groups larger than half the validation or the test size come first, largest
first (ties: first occurrence), so that they land in the training split as
in OGB's scaffold split; the other groups follow in an order drawn from the
seed. Each group then goes to the first split, in the order train,
validation, test, that still has room for all of it, or, if none has, to the
split with the most room left. Hence every split's size is within one group
of its target: a split ends short only by less than a group that did not fit
anywhere, and it overshoots at most once, by less than the group that
overshot it.

Scaffold subsample (:func:`scaffold_subsample`). A smaller training set
drawn by whole scaffold groups, for learning curves in the small-data
regime: the groups, in an order drawn from the seed, each join if all of it
still fits, until the size is reached. No scaffold is split, and the
subsample never exceeds the size.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ['split_targets', 'scaffold_split', 'scaffold_subsample',
           'random_split', 'murcko_scaffold']


def split_targets(num: int, sizes: Sequence[float]) -> tuple[int, int, int]:
    r"""The number of molecules of the train, validation and test splits
    for :obj:`num` molecules and the fractions :obj:`sizes` (rounded half
    up; the test split takes the rest, so the three sum to :obj:`num`)."""
    n_train = int(np.floor(sizes[0] * num + 0.5))
    n_val = min(int(np.floor(sizes[1] * num + 0.5)), num - n_train)
    return n_train, n_val, num - n_train - n_val


def murcko_scaffold(mol) -> str:
    r"""The Bemis-Murcko scaffold SMILES of an RDKit molecule, without
    chirality (empty for acyclic molecules)."""
    from rdkit.Chem.Scaffolds import MurckoScaffold
    return MurckoScaffold.MurckoScaffoldSmiles(mol=mol,
                                               includeChirality=False)


def scaffold_split(scaffolds: Sequence[str], sizes: Sequence[float],
                   seed: int = 0) -> list[np.ndarray]:
    r"""A balanced scaffold split (see the module documentation).

    Args:
        scaffolds (list of str): The scaffold of every molecule.
        sizes (list of float): Fractions of the train, validation and test
            splits (summing to 1).
        seed (int, optional): Seed of the order of the small groups.
            (default: :obj:`0`)

    Returns:
        The molecule indices of the three splits, each sorted.
    """
    groups: dict[str, list[int]] = {}
    for i, scaffold in enumerate(scaffolds):
        groups.setdefault(scaffold, []).append(i)
    targets = split_targets(len(scaffolds), sizes)
    big_limit = min(targets[1], targets[2]) / 2
    ordered = list(groups.values())  # first-occurrence order
    big = sorted((g for g in ordered if len(g) > big_limit),
                 key=len, reverse=True)  # stable: ties keep first occurrence
    small = [g for g in ordered if len(g) <= big_limit]
    permutation = np.random.default_rng(seed).permutation(len(small))
    small = [small[i] for i in permutation]

    members: list[list[int]] = [[], [], []]
    room = list(targets)
    for group in big + small:
        fits = [k for k in range(3) if room[k] >= len(group)]
        k = fits[0] if fits else int(np.argmax(room))
        members[k].extend(group)
        room[k] -= len(group)
    return [np.sort(np.asarray(m, dtype=np.int64)) for m in members]


def scaffold_subsample(scaffolds: Sequence[str], size: int,
                       seed: int = 0) -> np.ndarray:
    r"""Whole scaffold groups, :obj:`size` molecules at most (see the
    module documentation).

    Args:
        scaffolds (list of str): The scaffold of every molecule.
        size (int): Molecules wanted; at least 1.
        seed (int, optional): Seed of the order of the groups.
            (default: :obj:`0`)

    Returns:
        numpy.ndarray: The sorted indices of the chosen molecules.

    Raises:
        ValueError: :obj:`size` is below 1 or above the number of
            molecules.
    """
    if not 1 <= size <= len(scaffolds):
        raise ValueError(f"A subsample needs between 1 and "
                         f"{len(scaffolds)} molecules, got {size}")
    groups: dict[str, list[int]] = {}
    for i, scaffold in enumerate(scaffolds):
        groups.setdefault(scaffold, []).append(i)
    ordered = list(groups.values())  # first-occurrence order
    chosen: list[int] = []
    for k in np.random.default_rng(seed).permutation(len(ordered)):
        if len(chosen) + len(ordered[k]) <= size:
            chosen.extend(ordered[k])
            if len(chosen) == size:
                break
    return np.sort(np.asarray(chosen, dtype=np.int64))


def random_split(num: int, sizes: Sequence[float],
                 seed: int = 0) -> list[np.ndarray]:
    r"""A random split of :obj:`num` molecules into the fractions
    :obj:`sizes`, drawn from :obj:`seed`; returns the sorted indices of the
    train, validation and test splits."""
    n_train, n_val, _ = split_targets(num, sizes)
    order = np.random.default_rng(seed).permutation(num)
    parts = (order[:n_train], order[n_train:n_train + n_val],
             order[n_train + n_val:])
    return [np.sort(part).astype(np.int64) for part in parts]
