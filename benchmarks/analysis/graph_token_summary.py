r"""The graph-token geometry of trained runs summarized over seeds: per
dataset and norm the mean and sample standard deviation of uniformity and
anisotropy (see :mod:`~graphormer_sepnorm.analysis.graph_token`), SepNorm
against ShareNorm (difference of means, Welch-Satterthwaite 95% confidence
interval, Welch's p-value), and the markdown of the results: a table and
one sentence per dataset set against the SepNorm paper's claim that SepNorm
keeps graph-token embeddings more uniform."""
from __future__ import annotations

import statistics
from dataclasses import asdict
from typing import Any, Optional, Sequence

from .comparisons import p_text, welch
from .formatting import mean_std
from .runs import NORM_LABELS

#: The per-run quantities; lower is more uniform, resp. more isotropic.
QUANTITIES = ('uniformity', 'anisotropy')
_ORDER = {'sep': 0, 'share': 1}
_CLAIM = ("the paper's claim that SepNorm keeps graph-token embeddings more "
          "uniform")


def group_rows(rows: Sequence[dict[str, Any]]
               ) -> dict[tuple[str, str], list[dict[str, Any]]]:
    r"""The per-run rows by :obj:`(dataset, norm)`: datasets in alphabetical
    order, SepNorm before ShareNorm, runs in the order given.

    Args:
        rows (list of dict): Per-run rows with :obj:`dataset` and
            :obj:`norm`.
    """
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in sorted(rows, key=lambda r: (r['dataset'],
                                           _ORDER.get(r['norm'], 2),
                                           r['norm'])):
        groups.setdefault((row['dataset'], row['norm']), []).append(row)
    return groups


def summarize_geometry(rows: Sequence[dict[str, Any]]
                       ) -> dict[str, list[dict[str, Any]]]:
    r"""The summary of per-run rows (:obj:`dataset`, :obj:`norm`,
    :obj:`uniformity`, :obj:`anisotropy`).

    Args:
        rows (list of dict): One row per run.

    Returns:
        dict with :obj:`"summary"`: per (dataset, norm) :obj:`n` and the mean
        and sample standard deviation of each quantity
        (:obj:`uniformity_mean`, :obj:`uniformity_std`, ...; the standard
        deviation is :obj:`None` for one run), and :obj:`"comparisons"`: per
        dataset with two or more runs of each norm and per quantity, SepNorm
        minus ShareNorm as :func:`~benchmarks.analysis.comparisons.
        welch` computes it (:obj:`difference`, :obj:`low`, :obj:`high`,
        :obj:`p_value`, :obj:`dof`).
    """
    groups = group_rows(rows)
    summary = []
    for (dataset, norm), members in groups.items():
        entry: dict[str, Any] = {'dataset': dataset, 'norm': norm,
                                 'n': len(members)}
        for quantity in QUANTITIES:
            values = [r[quantity] for r in members]
            entry[f'{quantity}_mean'] = statistics.fmean(values)
            entry[f'{quantity}_std'] = (statistics.stdev(values)
                                        if len(values) > 1 else None)
        summary.append(entry)
    comparisons = []
    for dataset in sorted({dataset for dataset, _ in groups}):
        sep = groups.get((dataset, 'sep'), [])
        share = groups.get((dataset, 'share'), [])
        if len(sep) < 2 or len(share) < 2:
            continue
        for quantity in QUANTITIES:
            comparison = welch([r[quantity] for r in sep],
                               [r[quantity] for r in share])
            comparisons.append({'dataset': dataset, 'quantity': quantity,
                                **asdict(comparison)})
    return {'summary': summary, 'comparisons': comparisons}


def geometry_sentence(dataset: str, sep: Sequence[dict[str, Any]],
                      share: Sequence[dict[str, Any]],
                      comparisons: dict[str, dict[str, Any]]) -> str:
    r"""One markdown bullet for :obj:`dataset`: whether SepNorm's graph-token
    embeddings are more or less uniform and isotropic than ShareNorm's, by
    how much and how significantly, and whether that agrees with the
    paper's claim.

    Args:
        dataset (str): The dataset's name.
        sep (list of dict): The SepNorm runs' rows.
        share (list of dict): The ShareNorm runs' rows.
        comparisons (dict): Per quantity, SepNorm minus ShareNorm (entries
            of :func:`summarize_geometry`'s :obj:`"comparisons"`); empty
            when either norm has fewer than two runs.
    """
    if not comparisons:
        return (f"- **{dataset}**: {len(sep)} SepNorm and {len(share)} "
                f"ShareNorm runs; a comparison needs at least two of each.")
    parts = []
    for quantity, adjective in (('uniformity', 'uniform'),
                                ('anisotropy', 'isotropic')):
        c = comparisons[quantity]
        direction = ('more' if c['difference'] < 0 else
                     'less' if c['difference'] > 0 else 'equally')
        parts.append(
            f"{direction} {adjective} ({quantity} "
            f"{statistics.fmean(r[quantity] for r in sep):.3f} vs "
            f"{statistics.fmean(r[quantity] for r in share):.3f}; "
            f"difference {c['difference']:+.3f}, 95% CI "
            f"[{c['low']:+.3f}, {c['high']:+.3f}], Welch "
            f"{p_text(c['p_value'])})")
    uniformity = comparisons['uniformity']
    significant = uniformity['p_value'] < 0.05
    if uniformity['difference'] < 0:
        verdict = (f"This agrees with {_CLAIM}" +
                   (' (significant at the 5% level).' if significant else
                    ' in direction only: the difference is not significant '
                    'at the 5% level.'))
    elif uniformity['difference'] > 0:
        verdict = (f"This contradicts {_CLAIM} (significant at the 5% "
                   f"level)." if significant else
                   f"This goes against {_CLAIM} in direction, though the "
                   f"difference is not significant at the 5% level.")
    else:
        verdict = f"This does not support {_CLAIM}."
    return (f"- **{dataset}** ({len(sep)} vs {len(share)} seeds): SepNorm's "
            f"graph-token embeddings are {parts[0]} and {parts[1]} than "
            f"ShareNorm's. {verdict}")


def geometry_markdown(report: dict[str, Any],
                      plot: Optional[str] = None) -> str:
    r"""The graph-token geometry section of the results: per dataset and
    norm the mean ± std of uniformity and anisotropy over seeds, one
    :func:`geometry_sentence` per dataset, and the plot.

    Args:
        report (dict): The contents of :obj:`graph_token_geometry.json`
            (:obj:`split`, :obj:`runs`, :obj:`comparisons`).
        plot (str, optional): Link to the plot; no image if :obj:`None`.
            (default: :obj:`None`)
    """
    groups = group_rows(report['runs'])
    where = (f"the molecules of `{report['molecules']}`"
             if report.get('molecules') else f"the {report['split']} split")
    lines = [
        f"**Graph-token geometry** (`scripts/graph_token_analysis.py`: the "
        f"graph-token embeddings of each run on {where}; uniformity is "
        f"log E exp(-2 ‖u_i − u_j‖²) over pairs of "
        f"L2-normalized embeddings, lower is more uniform; anisotropy is "
        f"their mean pairwise cosine similarity, lower is more isotropic; "
        f"mean ± std over seeds, SepNorm − ShareNorm with Welch's test):", '',
        '| dataset | model | runs (n) | uniformity | anisotropy |',
        '| --- | --- | --- | --- | --- |']
    for (dataset, norm), members in groups.items():
        lines.append(
            f"| {dataset} | {NORM_LABELS.get(norm, norm)} | {len(members)} "
            f"| {mean_std([r['uniformity'] for r in members])} "
            f"| {mean_std([r['anisotropy'] for r in members])} |")
    lines.append('')
    for dataset in sorted({dataset for dataset, _ in groups}):
        lines.append(geometry_sentence(
            dataset, groups.get((dataset, 'sep'), []),
            groups.get((dataset, 'share'), []),
            {c['quantity']: c for c in report['comparisons']
             if c['dataset'] == dataset}))
    if plot is not None:
        lines += ['', f'![graph_token_geometry]({plot})']
    return '\n'.join(lines) + '\n'
