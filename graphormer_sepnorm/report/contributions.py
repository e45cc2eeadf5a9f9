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

from typing import NamedTuple, Optional, Sequence

import numpy as np
import torch

from ..forest import model_forest
from ..predict.molecules import Molecule

__all__ = ['METHOD', 'FIXED_FEATURES', 'TOLERANCE', 'MAX_STEPS',
           'describe_method', 'AtomContributions', 'atom_contributions',
           'canonical_to_input']

#: The default largest :attr:`AtomContributions.error` (the share by which
#: the contributions may miss the prediction minus the baseline's) before a
#: molecule's midpoints are doubled.
TOLERANCE = 0.05

#: The default most midpoints a molecule is refined to.
MAX_STEPS = 256

#: How the contributions are computed, as the report names it.
METHOD = ('integrated gradients on the atom-feature embeddings (baseline: '
          'every atom-feature embedding zero, the structure kept; {steps} '
          'steps, doubled up to {max_steps} for a molecule whose '
          'contributions miss its prediction minus the baseline\'s by more '
          'than {tolerance:.0%}); each atom\'s share of the prediction minus '
          'the baseline\'s, in the units of the prediction (binary: of the '
          'logit)')

#: Added to :data:`METHOD` for a model with molecule features.
FIXED_FEATURES = ('; the molecule-level features of the graph token '
                  '(computed as prediction does) are held fixed while the '
                  'atoms are attributed, so they take no share')


#: Added to :data:`METHOD` for a model blended with a forest.
BLENDED_FOREST = ('; the model blends a forest on the molecule features '
                  'with its network (model.forest_trees): the shading '
                  "explains the network's output only, not the forest's "
                  'share of the prediction')


def describe_method(
        predictor, steps: int,
        contributions: Sequence[Optional['AtomContributions']] = (),
        tolerance: float = TOLERANCE, max_steps: int = MAX_STEPS) -> str:
    r"""How the contributions of :obj:`predictor` are computed with
    :obj:`steps` midpoints (and :func:`atom_contributions`'
    :obj:`tolerance` and :obj:`max_steps`), in words (plain text):
    :data:`METHOD`, :data:`FIXED_FEATURES` for a model with molecule
    features, and how many of :obj:`contributions` still miss their
    target by more than :obj:`tolerance` (their shading is then
    approximate)."""
    text = METHOD.format(steps=steps, max_steps=max(steps, max_steps),
                         tolerance=tolerance)
    if getattr(predictor, 'molecule_featurizer', None) is not None:
        text += FIXED_FEATURES
    if any(model_forest(member.model) is not None
           for member in predictor.members):
        text += BLENDED_FOREST
    computed = [c for c in contributions if c is not None]
    missed = [c.error for c in computed if c.error > tolerance]
    if missed:
        text += (f'; {len(missed)} of {len(computed)} molecules still miss '
                 f'it by more than {tolerance:.0%} (at most {max(missed):.0%})'
                 f', so their shading is approximate')
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


class AtomContributions(NamedTuple):
    r"""The atom contributions of one molecule
    (:func:`atom_contributions`).

    Attributes:
        values (numpy.ndarray): One float64 per atom, in the order of the
            atoms of the SMILES as written.
        steps (int): The midpoints they were integrated with.
        target (float): What they should add up to: the prediction minus
            the baseline's (an ensemble's: the mean of its members').
    """
    values: np.ndarray
    steps: int
    target: float

    @property
    def error(self) -> float:
        r"""How far the contributions miss :attr:`target`: :math:`|\sum_i
        v_i - t|` over the larger of :math:`|t|` and :math:`\sum_i |v_i|`
        (0 when both are 0), the measure :obj:`tolerance` of
        :func:`atom_contributions` bounds."""
        scale = max(abs(self.target), float(np.abs(self.values).sum()))
        gap = abs(float(self.values.sum()) - self.target)
        return gap / scale if scale > 0 else 0.0


def atom_contributions(predictor, molecules: Sequence[Molecule],
                       steps: int = 16, batch_size: int = 256,
                       tolerance: float = TOLERANCE,
                       max_steps: int = MAX_STEPS
                       ) -> list[Optional[AtomContributions]]:
    r"""The per-atom contributions of each molecule's atoms to its first
    prediction column (see the module's description), in the order of the
    atoms of each SMILES as written.

    The midpoints approximate the integral, and how well depends on how
    sharply the model's output turns along the path: 16 midpoints can miss
    it by 20% for one molecule and be exact for the next. So each
    molecule's contributions are checked against what they must add up to
    (the prediction minus the baseline's, computed alongside) and, where
    they miss it by more than :obj:`tolerance`, computed again with twice
    the midpoints, up to :obj:`max_steps`.

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
        steps (int, optional): Midpoints of the integration path to start
            with; more is closer to exact and slower (the model runs about
            :obj:`steps` times per molecule, forward and backward).
            (default: :obj:`16`)
        batch_size (int, optional): Graphs per pass (each molecule counts
            :obj:`steps` + 2 times: the midpoints and the path's ends).
            (default: :obj:`256`)
        tolerance (float, optional): The largest
            :attr:`AtomContributions.error` accepted before :obj:`max_steps`
            is reached. (default: :data:`TOLERANCE`)
        max_steps (int, optional): Midpoints beyond which no molecule is
            refined; its contributions are returned with their
            :attr:`~AtomContributions.error`, whatever it is. A value below
            :obj:`steps` means :obj:`steps`. (default: :data:`MAX_STEPS`)

    Returns:
        One :class:`AtomContributions` per molecule, or :obj:`None` for a
        molecule the model cannot read, or whose molecule features cannot
        be computed (e.g. a SMILES without the values of the feature
        columns the model reads; the prediction says why).
    """
    from ..predict.molecules import SMILES, featurize_molecules

    if steps < 1:
        raise ValueError(f'steps must be a positive integer, got {steps}')
    if not tolerance >= 0:
        raise ValueError(f'tolerance must be at least 0, got {tolerance}')
    # The graphs (and molecule features) exactly as prediction builds them.
    chunk = featurize_molecules(molecules, SMILES, predictor.featurizer_name,
                                predictor.max_nodes,
                                predictor.molecule_featurizer)
    pending = [(k, graph, canonical_to_input(chunk.smiles[k]))
               for k, graph in zip(chunk.positions, chunk.graphs)]
    out: list[Optional[AtomContributions]] = [None] * len(molecules)
    while pending:
        final = steps * 2 > max_steps
        refine = []
        for item, result in zip(pending, _integrate(predictor, pending, steps,
                                                    batch_size)):
            if final or result.error <= tolerance:
                out[item[0]] = result
            else:
                refine.append(item)
        pending, steps = refine, steps * 2
    return out


def _integrate(predictor, prepared: list, steps: int, batch_size: int
               ) -> list[AtomContributions]:
    r"""The contributions of the :obj:`prepared` molecules (position,
    graph, atom order) with :obj:`steps` midpoints."""
    from ..data.molecule_graphs import collate

    copies = steps + 2
    per_batch = max(1, batch_size // copies)
    # The midpoints, then the baseline (0) and the molecule (1).
    midpoints = (torch.arange(steps, dtype=torch.float64) + 0.5) / steps
    alphas = torch.cat([midpoints, torch.tensor([0.0, 1.0],
                                                dtype=torch.float64)])
    results = []
    for start in range(0, len(prepared), per_batch):
        group = prepared[start:start + per_batch]
        graphs = [g for _, g, _ in group for _ in range(copies)]
        per_member = [_integrated_gradients(
            member, collate(graphs, member._layout).to(member.device),
            alphas, steps) for member in predictor.members]
        total = np.mean([scores for scores, _ in per_member], axis=0)
        targets = np.mean([gaps for _, gaps in per_member], axis=0)
        offset = 0
        for (_, graph, order), target in zip(group, targets):
            n = graph[0].shape[0]
            values = np.zeros(n)
            values[order] = total[offset:offset + n]
            offset += n
            results.append(AtomContributions(values, steps, float(target)))
    return results


def _integrated_gradients(member, batch, alphas: torch.Tensor, steps: int
                          ) -> tuple[np.ndarray, np.ndarray]:
    r"""Integrated gradients of :obj:`member`'s first output for a batch of
    molecules each repeated :obj:`len(alphas)` times (copy :obj:`s` scaled
    by :obj:`alphas[s]`: :obj:`steps` midpoints, then the path's two ends);
    returns one value per atom of the molecules, in batch order (first
    copies), and each molecule's output at the end minus at the start, both
    in the units of the prediction (binary: of the logit)."""
    model = member.model
    num_graphs = batch.num_graphs
    copies = len(alphas)
    scale = alphas.repeat(num_graphs // copies).to(
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
    ends = logits.detach().to(torch.float64).cpu().view(-1, copies)
    gaps = ends[:, -1] - ends[:, -2]
    if member.task == 'regression':
        unit = float(member.target_scaling.statistics()[1][0])
        per_atom, gaps = per_atom * unit, gaps * unit
    # Average the midpoints of each molecule: atoms of copy s of molecule m
    # (the ends' gradients are left out).
    sizes = torch.bincount(batch.batch, minlength=num_graphs).tolist()
    pieces = list(torch.split(per_atom.cpu(), sizes))
    return (torch.cat([torch.stack(pieces[m:m + steps]).mean(dim=0)
                       for m in range(0, num_graphs, copies)]).numpy(),
            gaps.numpy())
