r"""Which atoms drive a prediction: per-atom contributions by integrated
gradients on the atom-feature embeddings (:func:`atom_contributions`).

The model reads each atom as the sum of its atom-feature embedding and of
its degree embedding (:class:`~graphormer_sepnorm.nn.GraphormerNodeEncoder`).
The baseline hides what every atom *is* (its atom-feature embedding scaled
to zero) and keeps the structure (degrees, bonds, distances), as the
masked-atom pretraining hides an atom; the gradient of the output is
averaged along the straight path from that baseline to the molecule, at
:obj:`steps` midpoints, and multiplied by each atom's embedding. The
contributions of a molecule add up (up to the error of the :obj:`steps`
midpoints) to its prediction minus the baseline's: they are in the units of
the prediction (regression) or of the logit (binary), and an ensemble's are
the mean of its members'.

A model trained with molecule features (:obj:`data.molecule_features`,
:obj:`data.feature_columns`) reads them in its graph token: each molecule
gets the vector prediction computes (the model card's fitted
:class:`~graphormer_sepnorm.data.molecule_features.MoleculeFeaturizer`,
from the SMILES and, for feature columns, from the molecule's values of
them), the same along the whole path and in the baseline; the
contributions are the atoms' share of the rest.

The model sees atoms in canonical order
(:func:`~graphormer_sepnorm.data.featurize.canonical.parse_canonical`);
contributions are returned in the order of the atoms of the SMILES as given
(RDKit's parse of it), so that every spelling of a molecule gives each atom
the same contribution.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import torch

from ..predict.molecules import Molecule

__all__ = ['METHOD', 'FIXED_FEATURES', 'describe_method',
           'atom_contributions', 'canonical_to_input']

#: How the contributions are computed, as the report names it.
METHOD = ('integrated gradients on the atom-feature embeddings (baseline: '
          'every atom-feature embedding zero, the structure kept; {steps} '
          'steps); each atom\'s share of the prediction minus the '
          'baseline\'s, in the units of the prediction (binary: of the '
          'logit)')

#: Added to :data:`METHOD` for a model with molecule features.
FIXED_FEATURES = ('; the molecule-level features of the graph token '
                  '(computed as prediction does) are held fixed while the '
                  'atoms are attributed, so they take no share')


def describe_method(predictor, steps: int) -> str:
    r"""How the contributions of :obj:`predictor` are computed with
    :obj:`steps` midpoints, in words (plain text): :data:`METHOD`, and
    :data:`FIXED_FEATURES` for a model with molecule features."""
    text = METHOD.format(steps=steps)
    if getattr(predictor, 'molecule_featurizer', None) is not None:
        text += FIXED_FEATURES
    return text


def canonical_to_input(smiles: str) -> list[int]:
    r"""For each atom of the model's graph of :obj:`smiles` (canonical
    order), the index of the same atom in RDKit's parse of :obj:`smiles`
    as written.

    Raises:
        FeaturizationError: If :obj:`smiles` cannot be parsed.
    """
    from rdkit import Chem

    from ..data.featurize.smiles import _parse_smiles, _quiet_rdkit
    mol = _parse_smiles(smiles, None)
    with _quiet_rdkit():
        Chem.MolToSmiles(mol, canonical=True, isomericSmiles=True)
    # Atom k of the canonical SMILES (and of the molecule read back from it,
    # whose atoms the model sees in that order) is input atom order[k].
    return [int(k) for k in mol.GetProp('_smilesAtomOutputOrder')
            .strip('[]').split(',') if k.strip()]


def atom_contributions(predictor, molecules: Sequence[Molecule],
                       steps: int = 16, batch_size: int = 256
                       ) -> list[Optional[np.ndarray]]:
    r"""The per-atom contribution of each molecule's atoms to its first
    prediction column (see the module's description), in the order of the
    atoms of each SMILES as written.

    Args:
        predictor (PredictorBase): A
            :class:`~graphormer_sepnorm.predict.Predictor` or an
            :class:`~graphormer_sepnorm.predict.EnsemblePredictor` (the
            mean of its members' contributions).
        molecules (list of str or WithColumns): The molecules' SMILES; for
            a model that reads feature columns
            (:attr:`~graphormer_sepnorm.predict.PredictorBase.
            feature_columns`), each with its values of them
            (:class:`~graphormer_sepnorm.predict.molecules.WithColumns`),
            as prediction takes them.
        steps (int, optional): Midpoints of the integration path; more is
            closer to exact and slower (the model runs :obj:`steps` times
            per molecule, forward and backward). (default: :obj:`16`)
        batch_size (int, optional): Graphs per pass (each molecule counts
            :obj:`steps` times). (default: :obj:`256`)

    Returns:
        One float64 array per molecule (one value per atom), or
        :obj:`None` for a molecule the model cannot read, or whose
        molecule features cannot be computed (e.g. a SMILES without the
        values of the feature columns the model reads; the prediction
        says why).
    """
    from ..data.molecule_graphs import collate
    from ..predict.molecules import SMILES, featurize_molecules

    if steps < 1:
        raise ValueError(f'steps must be a positive integer, got {steps}')
    # The graphs (and molecule features) exactly as prediction builds them.
    chunk = featurize_molecules(molecules, SMILES, predictor.featurizer_name,
                                predictor.max_nodes,
                                predictor.molecule_featurizer)
    prepared = [(k, graph, canonical_to_input(chunk.smiles[k]))
                for k, graph in zip(chunk.positions, chunk.graphs)]
    out: list[Optional[np.ndarray]] = [None] * len(molecules)
    per_batch = max(1, batch_size // steps)
    alphas = (torch.arange(steps, dtype=torch.float64) + 0.5) / steps
    for start in range(0, len(prepared), per_batch):
        group = prepared[start:start + per_batch]
        graphs = [g for _, g, _ in group for _ in range(steps)]
        total = None
        for member in predictor.members:
            batch = collate(graphs, member._layout).to(member.device)
            scores = _integrated_gradients(member, batch, alphas, steps)
            total = scores if total is None else total + scores
        total /= len(predictor.members)
        offset = 0
        for k, graph, order in group:
            n = graph[0].shape[0]
            mine = total[offset:offset + n]
            offset += n
            values = np.zeros(n)
            values[order] = mine
            out[k] = values
    return out


def _integrated_gradients(member, batch, alphas: torch.Tensor,
                          steps: int) -> np.ndarray:
    r"""Integrated gradients of :obj:`member`'s first output for a batch of
    molecules each repeated :obj:`steps` times (copy :obj:`s` scaled by
    :obj:`alphas[s]`); returns one value per atom of the molecules, in batch
    order (first copies)."""
    model = member.model
    num_graphs = batch.num_graphs
    scale = alphas.repeat(num_graphs // steps).to(
        torch.float32).to(member.device)[batch.batch].view(-1, 1)
    captured = {}

    def scaled(module, inputs, output):
        output = output.detach()
        captured['h'] = output
        path = (output * scale).requires_grad_(True)
        captured['path'] = path
        return path

    handle = model.node_encoder.atom_embedding.register_forward_hook(scaled)
    try:
        with torch.enable_grad():
            logits = model.head_output(model.graph_embedding(batch))[:, 0]
            grad, = torch.autograd.grad(logits.sum(), captured['path'])
    finally:
        handle.remove()
    per_atom = (grad * captured['h']).sum(dim=1).to(torch.float64)
    if member.task == 'regression':
        per_atom = per_atom * float(member.target_scaling.statistics()[1][0])
    # Sum the steps of each molecule: atoms of copy s of molecule m.
    sizes = torch.bincount(batch.batch, minlength=num_graphs).tolist()
    pieces = list(torch.split(per_atom.cpu(), sizes))
    return torch.cat([torch.stack(pieces[m:m + steps]).mean(dim=0)
                      for m in range(0, num_graphs, steps)]).numpy()
