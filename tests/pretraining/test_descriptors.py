"""The descriptor targets: RDKit's own values, none built from a downstream
label, and the scaler against hand-computed statistics."""
import math

import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem import Crippen, Descriptors, rdMolDescriptors

from graphormer_sepnorm.pretraining.descriptors import (DESCRIPTOR_NAMES,
                                                        EXCLUDED,
                                                        DescriptorScaler,
                                                        descriptor_values)


def test_values_are_rdkits():
    mol = Chem.MolFromSmiles('CC(=O)Nc1ccc(O)cc1')  # paracetamol
    values = dict(zip(DESCRIPTOR_NAMES, descriptor_values(mol)))
    assert values['MolWt'] == pytest.approx(151.165, abs=1e-3)
    assert values['NumHDonors'] == 2
    assert values['NumHAcceptors'] == 2
    assert values['RingCount'] == 1
    assert values['TPSA'] == pytest.approx(rdMolDescriptors.CalcTPSA(mol))
    assert values['fr_amide'] == 1


def test_no_logp_or_sa_score_among_the_targets():
    # ZINC's label is Crippen logP - SA score - long cycles: no target may
    # equal Crippen logP or molar refractivity on real molecules.
    assert not set(DESCRIPTOR_NAMES) & set(EXCLUDED)
    for name in DESCRIPTOR_NAMES:
        lowered = name.lower()
        assert 'logp' not in lowered and 'sa' != lowered and \
            'slogp' not in lowered and 'smr' not in lowered and \
            'qed' not in lowered
    mols = [Chem.MolFromSmiles(s) for s in (
        'CCO', 'c1ccccc1O', 'CC(=O)Nc1ccc(O)cc1', 'CCN(CC)CCOC(=O)c1ccccc1')]
    logp = np.array([Crippen.MolLogP(m) for m in mols])
    values = np.stack([descriptor_values(m) for m in mols])
    for column in values.T:
        assert not np.allclose(column, logp)
    assert all(name in dict(Descriptors.descList) for name in DESCRIPTOR_NAMES)


def test_a_descriptor_rdkit_cannot_compute_is_nan(monkeypatch):
    from graphormer_sepnorm.pretraining import descriptors

    def fails(mol):
        raise ValueError('no charge for this atom')

    monkeypatch.setitem(descriptors._FUNCTIONS, 'Broken', fails)
    monkeypatch.setitem(descriptors._FUNCTIONS, 'Infinite',
                        lambda mol: math.inf)
    values = descriptor_values(Chem.MolFromSmiles('CCO'),
                               names=('MolWt', 'Broken', 'Infinite'))
    assert values[0] == pytest.approx(46.069, abs=1e-3)
    assert math.isnan(values[1]) and math.isnan(values[2])


def test_scaler_by_hand():
    values = np.array([[1.0, 10.0, 5.0], [3.0, 10.0, math.nan],
                       [5.0, 10.0, 7.0]])
    scaler = DescriptorScaler.fit(values, clip=1.0)
    np.testing.assert_allclose(scaler.mean, [3.0, 10.0, 6.0])
    # Population std; a constant column gets std 1.
    np.testing.assert_allclose(scaler.std, [math.sqrt(8 / 3), 1.0, 1.0])
    out = scaler.transform(np.array([[3.0, 12.0, math.nan]]))
    assert out[0, 0] == 0.0
    assert out[0, 1] == 1.0  # 2 standard deviations, clipped to 1
    assert math.isnan(out[0, 2])
    again = DescriptorScaler.from_state_dict(scaler.state_dict())
    np.testing.assert_array_equal(again.transform(values),
                                  scaler.transform(values))


def test_excluded_and_unknown_names_are_refused():
    mol = Chem.MolFromSmiles('CCO')
    with pytest.raises(ValueError, match=r'descriptor\(s\) MolLogP are '
                       r'excluded from the pretraining targets'):
        descriptor_values(mol, ['TPSA', 'MolLogP'])
    with pytest.raises(ValueError, match=r"unknown RDKit descriptor\(s\) "
                       r"'Foo'; names are those of"):
        descriptor_values(mol, ['Foo'])
    # A chosen subset of allowed names is RDKit's value.
    assert descriptor_values(mol, ['TPSA']).tolist() == [
        rdMolDescriptors.CalcTPSA(mol)]
