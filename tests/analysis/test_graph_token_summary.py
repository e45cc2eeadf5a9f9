"""Graph-token geometry over seeds: hand-computed means, standard deviations
and Welch's test, and sentences that follow the numbers in both
directions (constructed rows, no models)."""
import math

import pytest
from scipy import stats

from benchmarks.analysis.graph_token_summary import (
                                                     geometry_markdown, summarize_geometry)


def rows(dataset, norm, uniformities, anisotropies):
    return [{'dataset': dataset, 'norm': norm, 'seed': seed,
             'run': f'runs/{dataset}/{norm}_seed{seed}', 'split': 'test',
             'num_graphs': 10, 'uniformity': u, 'anisotropy': a}
            for seed, (u, a) in enumerate(zip(uniformities, anisotropies))]


def report(sep, share, dataset='zinc_subset', extra=()):
    """A report of :obj:`sep` and :obj:`share` ((uniformities,
    anisotropies) each) as graph_token_report writes it."""
    runs = rows(dataset, 'share', *share) + rows(dataset, 'sep', *sep) + \
        list(extra)
    return {'split': 'test', 'plot': 'graph_token_geometry.png',
            'runs': runs, **summarize_geometry(runs)}


# sep uniformity -3, -2, -1: mean -2, variance 1; share -1.5, -1, -0.5:
# mean -1, variance 1/4. se^2 = 1/3 + 1/12 = 5/12;
# dof = (5/12)^2 / ((1/3)^2 / 2 + (1/12)^2 / 2) = 50/17.
BY_HAND_SEP = ([-3.0, -2.0, -1.0], [0.1, 0.2, 0.3])
BY_HAND_SHARE = ([-1.5, -1.0, -0.5], [0.4, 0.6, 0.8])


def test_summary_and_welch_by_hand():
    result = report(BY_HAND_SEP, BY_HAND_SHARE)
    sep, share = result['summary']
    assert (sep['dataset'], sep['norm'], sep['n']) == ('zinc_subset', 'sep',
                                                       3)
    assert share['norm'] == 'share'
    assert (sep['uniformity_mean'], sep['uniformity_std']) == pytest.approx(
        (-2.0, 1.0))
    assert (share['uniformity_mean'],
            share['uniformity_std']) == pytest.approx((-1.0, 0.5))
    assert (sep['anisotropy_mean'], sep['anisotropy_std'],
            share['anisotropy_mean'],
            share['anisotropy_std']) == pytest.approx((0.2, 0.1, 0.6, 0.2))
    uniformity = next(c for c in result['comparisons']
                      if c['quantity'] == 'uniformity')
    assert uniformity['dataset'] == 'zinc_subset'
    assert uniformity['difference'] == pytest.approx(-1.0)
    assert uniformity['dof'] == pytest.approx(50 / 17)
    t = -1.0 / math.sqrt(5 / 12)
    assert uniformity['p_value'] == pytest.approx(2 * stats.t.cdf(t, 50 / 17))
    half = stats.t.ppf(0.975, 50 / 17) * math.sqrt(5 / 12)
    assert (uniformity['low'], uniformity['high']) == pytest.approx(
        (-1.0 - half, -1.0 + half))


def test_one_run_has_no_std_and_no_comparison():
    result = report(sep=([-2.0], [0.1]), share=([-1.0, -1.2], [0.3, 0.4]))
    assert result['summary'][0]['uniformity_std'] is None
    assert result['comparisons'] == []
    assert ('1 SepNorm and 2 ShareNorm runs; a comparison needs at least two '
            'of each') in geometry_markdown(result)


# Clearly separated: uniformity -3 ± 0.1 against -1 ± 0.2 (3 seeds each;
# se^2 = 0.01/3 + 0.04/3, t = -2 / 0.129 = -15.5), anisotropy the other
# way round.
CLEAR_SEP = ([-3.0, -2.9, -3.1], [0.4, 0.6, 0.8])
CLEAR_SHARE = ([-1.0, -1.2, -0.8], [0.1, 0.2, 0.3])


def test_sepnorm_more_uniform_agrees_with_the_paper():
    text = geometry_markdown(report(CLEAR_SEP, CLEAR_SHARE))
    assert ('| zinc_subset | Graphormer + SepNorm | 3 | -3.000 ± 0.100 '
            '| 0.600 ± 0.200 |') in text
    assert ('| zinc_subset | Graphormer (ShareNorm) | 3 | -1.000 ± 0.200 '
            '| 0.200 ± 0.100 |') in text
    assert ("- **zinc_subset** (3 vs 3 seeds): SepNorm's graph-token "
            "embeddings are more uniform (uniformity -3.000 vs -1.000; "
            "difference -2.000") in text
    assert 'and less isotropic (anisotropy 0.600 vs 0.200' in text
    assert ("This agrees with the paper's claim that SepNorm keeps "
            "graph-token embeddings more uniform (significant at the 5% "
            "level).") in text
    assert '![' not in text  # no plot link


def test_sepnorm_less_uniform_contradicts_the_paper():
    text = geometry_markdown(report(CLEAR_SHARE, CLEAR_SEP),
                             plot='figs/graph_token_geometry.png')
    assert ("SepNorm's graph-token embeddings are less uniform (uniformity "
            "-1.000 vs -3.000; difference +2.000") in text
    assert 'and more isotropic (anisotropy 0.200 vs 0.600' in text
    assert ("This contradicts the paper's claim that SepNorm keeps "
            "graph-token embeddings more uniform (significant at the 5% "
            "level).") in text
    assert 'agrees' not in text
    assert text.endswith(
        '![graph_token_geometry](figs/graph_token_geometry.png)\n')


def test_a_difference_that_is_not_significant_says_so():
    # Welch p = 0.22 (see the hand computation).
    text = geometry_markdown(report(BY_HAND_SEP, BY_HAND_SHARE))
    assert ("This agrees with the paper's claim that SepNorm keeps "
            "graph-token embeddings more uniform in direction only: the "
            "difference is not significant at the 5% level.") in text
    text = geometry_markdown(report(BY_HAND_SHARE, BY_HAND_SEP))
    assert ("This goes against the paper's claim that SepNorm keeps "
            "graph-token embeddings more uniform in direction, though the "
            "difference is not significant at the 5% level.") in text


def test_one_sentence_per_dataset():
    molhiv = rows('molhiv', 'sep', *CLEAR_SHARE) + rows('molhiv', 'share',
                                                        *CLEAR_SEP)
    text = geometry_markdown(report(CLEAR_SEP, CLEAR_SHARE, extra=molhiv))
    sentences = [line for line in text.splitlines() if line.startswith('- ')]
    assert [s.split('**')[1] for s in sentences] == ['molhiv', 'zinc_subset']
    assert 'less uniform' in sentences[0] and 'more uniform (' in sentences[1]
    table = [line.split(' | ')[:2] for line in text.splitlines()
             if line.startswith('| molhiv') or line.startswith('| zinc')]
    assert table == [['| molhiv', 'Graphormer + SepNorm'],
                     ['| molhiv', 'Graphormer (ShareNorm)'],
                     ['| zinc_subset', 'Graphormer + SepNorm'],
                     ['| zinc_subset', 'Graphormer (ShareNorm)']]
