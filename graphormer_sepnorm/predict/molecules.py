r"""What a molecule is handed to a predictor as (:data:`Molecule`): a SMILES
string, or an SDF record that RDKit turns into one (in the worker
processes, so that parsing a large SDF file is spread over the cores like
the rest of the work), with its values of the model's feature
columns for a model trained with :obj:`data.feature_columns` (see
:mod:`~.feature_columns`); and a chunk of them featurized into graphs
(:func:`featurize_molecules`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Optional, Sequence, Union

if TYPE_CHECKING:  # RDKit and torch load when a chunk is featurized
    from ..data.molecule_features import MoleculeFeaturizer
    from ..data.molecule_graphs import Graph

__all__ = ['SMILES', 'SDF', 'WithColumns', 'Molecule',
           'sdf_record_to_smiles', 'FeaturizedChunk', 'featurize_molecules']

#: Kinds of molecule text handed to the predictor.
SMILES = 'smiles'
SDF = 'sdf'


class WithColumns(NamedTuple):
    r"""A molecule with its values of the feature columns a model reads.

    Attributes:
        text (str): A SMILES string or an SDF record.
        values (list): Its values of the model's feature columns, in the
            model's order (numbers or their text).
    """
    text: str
    values: Sequence[Any]


#: One molecule handed to a predictor: its text (a SMILES string or an SDF
#: record), or, for a model that reads feature columns, the text with its
#: values of them (:class:`WithColumns`).
Molecule = Union[str, WithColumns]


def sdf_record_to_smiles(record: str) -> str:
    r"""The SMILES that RDKit writes for one SDF record (its mol block).

    Raises:
        FeaturizationError: If RDKit cannot read the record; the message
            says why when RDKit can (a chemistry problem), and names the
            record.
    """
    from rdkit import Chem

    from ..data.featurize.smiles import FeaturizationError, _quiet_rdkit

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


@dataclass
class FeaturizedChunk:
    r"""What :func:`featurize_molecules` returns for one chunk.

    Attributes:
        smiles (list[str]): Each molecule's SMILES, in input order.
        errors (list[str or None]): Why each molecule has no graph, or
            :obj:`None`.
        graphs (list[Graph]): The graphs of the molecules that have one.
        positions (list[int]): The input position of each graph.
    """
    smiles: list[str]
    errors: list[Optional[str]]
    graphs: list[Graph]
    positions: list[int]


def featurize_molecules(molecules: Sequence[Molecule], kind: str,
                        featurizer: str, max_nodes: int,
                        molecule_features: Optional[MoleculeFeaturizer] = None
                        ) -> FeaturizedChunk:
    r"""Each molecule's SMILES and graph (:obj:`featurizer`, at most
    :obj:`max_nodes` atoms), or why it has none: the CPU half of a chunk's
    prediction (picklable: worker processes return it). :obj:`molecules`
    are SMILES strings, or SDF records when :obj:`kind` is :obj:`"sdf"`,
    each alone or with its feature-column values (:data:`Molecule`).
    With :obj:`molecule_features` (the model card's fitted featurizer),
    each graph carries the molecule's feature vector as a sixth array; a
    molecule whose features cannot be computed (a
    feature-column value empty or not a finite number, or missing) gets an
    error."""
    from ..data.featurize import FeaturizationError
    from ..data.molecule_graphs import prepare_graph
    # Anything but WithColumns is the molecule's text (or what was given
    # instead, which gets its error below).
    texts = [m.text if isinstance(m, WithColumns) else m for m in molecules]
    values = [m.values if isinstance(m, WithColumns) else None
              for m in molecules]
    smiles: list[str] = list(texts)
    errors: list[Optional[str]] = [None] * len(smiles)
    graphs: list[Graph] = []
    positions: list[int] = []
    for i, molecule in enumerate(texts):
        try:
            if kind != SMILES:
                smiles[i] = ''
                smiles[i] = sdf_record_to_smiles(molecule)
            graph = prepare_graph(smiles[i], featurizer, max_nodes)
            if molecule_features is not None:
                graph = (*graph, molecule_features(smiles[i], values[i]))
            graphs.append(graph)
            positions.append(i)
        except FeaturizationError as error:
            errors[i] = str(error)
        except Exception as error:  # One bad molecule never stops the rest.
            errors[i] = (f"SMILES {smiles[i]!r} could not be featurized "
                         f"({type(error).__name__}: {error})")
    return FeaturizedChunk(smiles, errors, graphs, positions)
