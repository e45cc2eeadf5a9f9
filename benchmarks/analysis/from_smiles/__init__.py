r"""Best from SMILES: per set (:data:`SETS`), every method that reads the
molecules' SMILES (:mod:`~benchmarks.analysis.methods`: Graphormer from
scratch, fine-tuned from the bundled backbone or from one pretrained for
another number of steps, each with molecule features, and chemprop's
D-MPNN with and without its own) against chemprop's default D-MPNN, and
whether our best row beats it (:data:`GOAL`).

Each Graphormer method shows the norm (SepNorm or ShareNorm) of the best
mean **validation** metric over its seeds, never test; the row the goal
reads is ours of the best mean validation. Differences are our row minus
chemprop's default: Welch's interval and test, on the test molecules every
run of both predicted where one split serves every seed (MolHIV's OGB
split, ZINC-subset's), on each run's own test split where each seed is its
own scaffold split (:data:`PER_SEED_SPLITS`), which also gives the
difference paired by seed. A row without runs reads "not run".

Issue 45's same budget: each row's mean CPU minutes per run over chemprop
default's on the same set (:meth:`SetResult.minutes_ratio`), and for the
row the goal reads whether it is at most 1 (:func:`budget_counts`),
reported beside the goal's verdict, not part of it. Where the row and
chemprop's default were replayed side by side on one machine
(``benchmarks/same_budget.py``, :func:`attach_measured`), that ratio is
read instead.
"""
from .markdown import (from_smiles_markdown, from_smiles_summary, goal_line,
                       set_table)
from .rows import (GOAL, SETS, Row, SetResult, attach_measured,
                   budget_counts, choose_family, from_smiles_sets,
                   goal_counts, goal_met, set_result)

__all__ = [
    'SETS',
    'GOAL',
    'Row',
    'SetResult',
    'choose_family',
    'set_result',
    'from_smiles_sets',
    'goal_counts',
    'goal_met',
    'budget_counts',
    'attach_measured',
    'set_table',
    'goal_line',
    'from_smiles_markdown',
    'from_smiles_summary',
]
