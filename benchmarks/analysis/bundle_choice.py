r"""The rule that chooses the bundled models, and its table in
``scripts/README.md``.

On MolHIV's scaffold split one run's validation score is a weak guide to
its test score, so the bundled models are not one run's best. The rule
chooses a *family* (one row of the results table: dataset, norm, config,
featurizer and variant, over its seeds) by its **mean** best-validation
metric over seeds, among the Graphormer families with at least
:data:`~.runs.MIN_SEEDS` seeds, and ships that family's seed ensemble: the
mean of its members' predictions, with their spread as a per-molecule
uncertainty.
Test plays no part in the choice; the table reports it afterwards.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

from .formatting import mean_std, metric_format, metric_name
from .runs import Group, mean_val, ranked_by_validation

#: Bundled model name -> the benchmark (results-table dataset) its family is
#: chosen on.
BUNDLED_BENCHMARKS = {'molhiv': 'molhiv', 'zinc': 'zinc_subset'}
#: The committed final runs the rule reads (relative to the repository).
RUNS_ROOT = 'benchmarks/results/runs'

#: A run as the rule and the model cards name it: (plan, norm, seed).
Member = tuple[str, str, int]


#: Bytes a bundled member's blended forest takes per tree node (five
#: 8-byte tensors: children, split feature, float64 threshold, leaf value).
FOREST_BYTES_PER_NODE = 40


def forest_megabytes(group: Group) -> float:
    r"""The mean size, in MB, of the blended forests of :obj:`group`'s runs
    (``model.forest_trees``); 0 for a family without one."""
    nodes = [(run.get('forest') or {}).get('nodes', 0) for run in group.runs]
    return (sum(nodes) / len(nodes) * FOREST_BYTES_PER_NODE / 1e6
            if nodes else 0.0)


def candidates(groups: Sequence[Group], dataset: str) -> list[Group]:
    r"""The Graphormer families of :obj:`dataset` that the rule may choose,
    best mean validation first (:func:`~.runs.ranked_by_validation`):
    all but those blended with a forest (:func:`forest_megabytes`), whose
    members would not fit the package (a MolHIV member's 50 trees take
    about 6.5 MB, five times its network)."""
    return ranked_by_validation([g for g in groups if g.dataset == dataset
                                 and not forest_megabytes(g)])


def not_bundled(groups: Sequence[Group], dataset: str) -> list[Group]:
    r"""The Graphormer families of :obj:`dataset` left out of the rule
    because they carry a forest (see :func:`candidates`)."""
    return [g for g in groups if g.dataset == dataset and g.is_graphormer
            and forest_megabytes(g)]


@dataclass
class FamilyChoice:
    r"""The family chosen for the bundled model :obj:`name`, with the
    candidates it was chosen from (best first)."""
    name: str
    dataset: str
    ranked: list[Group]

    @property
    def chosen(self) -> Group:
        return self.ranked[0]


def choose_families(groups: Sequence[Group]) -> dict[str, FamilyChoice]:
    r"""The chosen family of every bundled model whose benchmark has a
    candidate (:func:`candidates`), by bundled name."""
    choices = {}
    for name, dataset in BUNDLED_BENCHMARKS.items():
        ranked = candidates(groups, dataset)
        if ranked:
            choices[name] = FamilyChoice(name, dataset, ranked)
    return choices


def member(record: dict) -> Member:
    r"""The run a record names, as (plan, norm, seed): a run's
    ``results.json`` and a bundled member card's :obj:`extra` name it the
    same way."""
    return record['protocol']['plan'], record['norm'], record['seed']


def family_members(group: Group) -> set[Member]:
    r"""The runs of :obj:`group` in :func:`member`'s form."""
    return {member(run) for run in group.runs}


def shipped_members(name: str,
                    directory: Optional[Path] = None) -> set[Member]:
    r"""The runs the member files of the bundled model :obj:`name` were
    made from, read from their cards (:func:`member`'s form); empty
    when none is installed."""
    from graphormer_sepnorm.bundled import (BundledModelNotInstalled,
                                            bundled_model_paths)
    from graphormer_sepnorm.checkpoint import read_card
    try:
        paths = bundled_model_paths(name, directory)
    except BundledModelNotInstalled:
        return set()
    return {member(read_card(path)[0].extra) for path in paths}


def stale_bundles(groups: Sequence[Group],
                  shipped: Callable[[str], set[Member]] = shipped_members
                  ) -> list[FamilyChoice]:
    r"""The bundled models whose shipped members (:obj:`shipped`, by
    name) are not the runs of the family the rule chooses now: they need
    bundling again, from the chosen runs' weights."""
    return [choice for name, choice in choose_families(groups).items()
            if shipped(name) != family_members(choice.chosen)]


def bundle_choice_markdown(groups: Sequence[Group]) -> str:
    r"""Per bundled model, every candidate family with its seeds, mean
    validation (the rule's criterion), and afterwards its members' test
    mean and its seed ensemble's test score, the chosen one marked; then a
    sentence per model naming what it ships."""
    from .test_predictions import seed_ensemble
    lines = ['| bundled model | family (chosen first) | seeds | validation, '
             'mean ± std (the rule) | test, mean ± std of the members '
             '| test of the seed ensemble |',
             '| --- | --- | --- | --- | --- | --- |']
    sentences = []
    for name, choice in choose_families(groups).items():
        for group in choice.ranked:
            scale, digits = metric_format(group)
            report = seed_ensemble(group.runs)
            ensemble = ('n/a' if report is None else
                        f'{report.metric * scale:.{digits}f}')
            label = group.label
            if group is choice.chosen:
                label = f'**{label}** (chosen)'
            lines.append(
                f'| `{name}` | {label} '
                f'| {",".join(map(str, group.seeds))} '
                f'| {mean_std(group.best_val, scale, digits)} '
                f'| {mean_std(group.test, scale, digits)} | {ensemble} |')
        chosen = choice.chosen
        scale, digits = metric_format(chosen)
        sentences.append(
            f'- `--model {name}`: the seed ensemble of {chosen.label} on '
            f'{choice.dataset} (seeds {", ".join(map(str, chosen.seeds))}), '
            f'best of {len(choice.ranked)} families by mean validation '
            f'{metric_name(chosen)} '
            f'({mean_val(chosen) * scale:.{digits}f}).')
        for group in not_bundled(groups, choice.dataset):
            sentences.append(
                f'- Not a candidate for `--model {name}`: {group.label} '
                f'(mean validation {mean_val(group) * scale:.{digits}f}): '
                f'its blended forest takes {forest_megabytes(group):.1f} MB '
                f'per member, too large to ship in the package.')
    if len(lines) == 2:
        return ''
    return '\n'.join(lines) + '\n\n' + '\n'.join(sentences) + '\n'


def card_note(name: str, runs_root: str = RUNS_ROOT) -> str:
    r"""The model-card note of the members of the bundled ensemble
    :obj:`name`: the rule, every candidate family's mean validation, and
    the chosen family's seed-ensemble test score, from the committed runs
    below :obj:`runs_root`."""
    from .runs import group_runs, load_runs
    from .test_predictions import seed_ensemble
    choice = choose_families(group_runs(load_runs(runs_root)))[name]
    chosen = choice.chosen
    scale, digits = metric_format(chosen)
    plan = chosen.runs[0].get('protocol', {}).get('plan')
    families = '; '.join(
        f'{g.label} {mean_std(g.best_val, scale, digits)}'
        for g in choice.ranked)
    report = seed_ensemble(chosen.runs)
    test = ('' if report is None else
            f' Test {metric_name(chosen)} of the seed ensemble, from the '
            f"runs' test predictions: {report.metric * scale:.{digits}f}.")
    return (f'A member of the seed ensemble (seeds '
            f'{", ".join(map(str, chosen.seeds))}) of {chosen.label} '
            f'(plan {plan}), the Graphormer family with the best mean '
            f'validation {metric_name(chosen)} over seeds on '
            f'{choice.dataset} (benchmarks/analysis/bundle_choice.py); mean '
            f'± std over seeds: {families}.{test}')
