"""Atom contributions (integrated gradients on the atom-feature
embeddings) against independent truths: a model trained to count nitrogen
atoms puts the count on the nitrogens; the contributions add up to the
prediction minus the baseline's (the baseline computed here with its own
hook); every spelling of a SMILES gives each atom the same contribution
(atoms matched by RDKit's substructure match, not by the canonical order
the library uses)."""
import random

import numpy as np
import pytest
import torch
from rdkit import Chem

from graphormer_sepnorm.data.molecule_graphs import collate, prepare_graph
from graphormer_sepnorm.report.contributions import (atom_contributions,
                                                     canonical_to_input)

from report_helpers import chain_smiles, counting_predictor, nitrogens  # noqa: F401,E501


def held_out(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        smiles = chain_smiles(rng)
        if 'N' in smiles and 'N' * len(smiles) != smiles:
            found.append(smiles)
    return found


def test_canonical_to_input_by_hand():
    # 'OCC' is written canonically as 'CCO': input atoms 2, 1, 0.
    assert canonical_to_input('OCC') == [2, 1, 0]
    assert canonical_to_input('CCO') == [0, 1, 2]


# The counting model trained here differs from one CPU to another (the
# order of floating-point sums), and on some its integration path turns
# sharply enough that few midpoints miss the integral: on an Intel Xeon the
# 16-step contributions of CN(O)ONN add up to 2.86, 64 steps to 3.92 and 256
# to 3.457, its prediction minus the baseline's. The tests check the
# integral, so they take enough steps for it.
IG_STEPS = 64
EXACT_STEPS = 256


def test_nitrogens_carry_the_count(counting_predictor):  # noqa: F811
    molecules = held_out(40)
    scores = atom_contributions(counting_predictor, molecules,
                                steps=IG_STEPS)
    ranked_first = 0
    on_n, elsewhere = [], []
    for smiles, values in zip(molecules, scores):
        mol = Chem.MolFromSmiles(smiles)
        is_n = np.array([a.GetSymbol() == 'N' for a in mol.GetAtoms()])
        k = int(is_n.sum())
        assert k == nitrogens(smiles)
        top = set(np.argsort(-values)[:k].tolist())
        ranked_first += top == set(np.nonzero(is_n)[0].tolist())
        on_n.append(values[is_n].sum())
        elsewhere.append(np.abs(values[~is_n]).mean())
    # The k nitrogens are the k largest contributions in most molecules,
    # and together they carry about one unit each.
    assert ranked_first >= 36, ranked_first
    counts = np.array([nitrogens(s) for s in molecules])
    assert np.mean(np.abs(np.array(on_n) / counts - 1)) < 0.5
    assert np.mean(elsewhere) < 0.25 * np.mean(np.array(on_n) / counts)


def _baseline_output(predictor, smiles: str) -> float:
    """The model's output with every atom-feature embedding zero."""
    model = predictor.model
    handle = model.node_encoder.atom_embedding.register_forward_hook(
        lambda module, inputs, output: torch.zeros_like(output))
    try:
        with torch.no_grad():
            batch = collate([prepare_graph(smiles, 'zinc', 40)],
                            model.layout_options())
            return float(model(batch)[0, 0])
    finally:
        handle.remove()


def test_contributions_add_up_to_prediction_minus_baseline(
        counting_predictor):  # noqa: F811
    for smiles in held_out(5, seed=3):
        values, = atom_contributions(counting_predictor, [smiles],
                                     steps=EXACT_STEPS)
        prediction = counting_predictor.predict([smiles])[0].value
        gap = prediction - _baseline_output(counting_predictor, smiles)
        assert values.sum() == pytest.approx(gap, rel=0.02, abs=0.02)


def test_same_contributions_for_every_spelling(counting_predictor):  # noqa: F811,E501
    rng = random.Random(1)
    for smiles in held_out(6, seed=11) + ['OCC(N)C(=O)NCCN', 'NC1CCC(O)CC1']:
        mol = Chem.MolFromSmiles(smiles)
        spellings = {Chem.MolToSmiles(mol, doRandom=True, canonical=False)
                     for _ in range(6)} | {smiles}
        spellings = sorted(spellings)
        results = atom_contributions(counting_predictor, spellings)
        reference = results[0]
        ref_mol = Chem.MolFromSmiles(spellings[0])
        for spelling, values in zip(spellings[1:], results[1:]):
            other = Chem.MolFromSmiles(spelling)
            # match[i]: the atom of `other` that is atom i of ref_mol.
            match = other.GetSubstructMatch(ref_mol)
            assert len(match) == ref_mol.GetNumAtoms()
            np.testing.assert_allclose(values[list(match)], reference,
                                       atol=1e-4)
    # Not trivially so: some spellings order the atoms differently.
    assert canonical_to_input('NCC(O)C') != canonical_to_input('CC(O)CN')


def test_unreadable_molecules_get_none(counting_predictor):  # noqa: F811
    out = atom_contributions(counting_predictor,
                             ['CCN', 'not a smiles', '', 'C' * 60, 'N'])
    assert out[1] is None and out[2] is None and out[3] is None  # > 40 atoms
    assert out[0].shape == (3,) and out[4].shape == (1,)
    with pytest.raises(ValueError, match='steps'):
        atom_contributions(counting_predictor, ['CCN'], steps=0)
