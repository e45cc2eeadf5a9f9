r"""What a molecule is handed to a predictor as: a SMILES string, or an SDF
record that RDKit turns into one (in the worker processes, so that parsing a
large SDF file is spread over the cores like the rest of the work)."""
from __future__ import annotations

__all__ = ['SMILES', 'SDF', 'sdf_record_to_smiles']

#: Kinds of molecule text handed to the predictor.
SMILES = 'smiles'
SDF = 'sdf'


def sdf_record_to_smiles(record: str) -> str:
    r"""The SMILES that RDKit writes for one SDF record (its mol block).

    Raises:
        FeaturizationError: If RDKit cannot read the record; the message
            says why when RDKit can (a chemistry problem), and names the
            record.
    """
    from rdkit import Chem

    from ..data.featurize import FeaturizationError
    from ..data.featurize.smiles import _quiet_rdkit

    with _quiet_rdkit():
        mol = Chem.MolFromMolBlock(record)
        if mol is None:
            unsanitized = Chem.MolFromMolBlock(record, sanitize=False)
            problems = (Chem.DetectChemistryProblems(unsanitized)
                        if unsanitized is not None else ())
            reason = ('RDKit rejects its chemistry: ' +
                      '; '.join(p.Message() for p in problems)
                      if len(problems) else 'not a valid mol block')
            name = record.split('\n', 1)[0].strip()
            raise FeaturizationError(
                f"SDF record {name!r} could not be read by RDKit ({reason}); "
                f"fix or remove the record")
        return Chem.MolToSmiles(mol)
