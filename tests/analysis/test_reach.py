"""benchmarks/analysis/reach.py: the backbone-reach table, its paired
comparison checked by hand, and the committed blocks against the runs."""
import json
import math
from pathlib import Path

import pytest

from benchmarks.analysis.reach import (ablation_summary, ablation_table,
                                       ablation_verdict,
                                       method_of, paired, reach_markdown,
                                       reach_sets, reach_summary)
from conftest import REPO
from test_from_smiles import bundled_6000  # noqa: F401


def _run(benchmark, seed, test, method='scratch', val=0.7, cpu=60.0):
    run = {'benchmark': benchmark, 'dataset': 'csv', 'seed': seed,
           'metric': 'rocauc', 'test_metric_at_best_val': test,
           'best_val_metric': val, 'cpu_time_s': cpu,
           'hardware': {'device_name': 'CPU X'}, 'init_from': None}
    if method == 'fine-tuned':
        run['init_from'] = {'source': 'bundled:pretrained-sepnorm'}
    if method == 'chemprop':
        run.update(model_family='chemprop D-MPNN', max_epochs=50,
                   max_cpu_minutes=12)
    return run


def test_methods_come_from_the_family_and_the_initialization():
    assert method_of(_run('a', 0, .5)) == 'scratch'
    assert method_of(_run('a', 0, .5, 'fine-tuned')) == 'fine-tuned'
    assert method_of(_run('a', 0, .5, 'chemprop')) == 'chemprop'


def test_runs_with_molecule_features_never_mix_with_the_plain_columns():
    featurized = dict(_run('b', 3, .2, 'chemprop'),
                      molecule_featurizers=['rdkit_2d'])
    ours = dict(_run('b', 4, .3, 'fine-tuned'),
                molecule_features={'featurizers': ['rdkit2d']})
    plain = [_run('b', s, .8, 'chemprop') for s in (0, 1)] + \
        [_run('b', s, v, m) for s in (0, 1) for m, v in
         (('scratch', .6), ('fine-tuned', .7))]
    sets = reach_sets(plain + [featurized, ours])
    assert sorted(sets['b']) == ['chemprop', 'chemprop + rdkit_2d',
                                 'fine-tuned', 'fine-tuned + rdkit2d',
                                 'scratch']
    assert [r['seed'] for r in sets['b']['chemprop']] == [0, 1]
    row = next(line for line in reach_markdown(sets).splitlines()
               if line.startswith('| b'))
    # Their seeds (3, 4) and scores (20, 30) are in no column.
    assert row.startswith('| b | 0,1 | — | 80.00 ± 0.00 | 60.00 ± 0.00 | '
                          '70.00 ± 0.00 |')


def test_paired_difference_by_hand():
    # Differences 0.02, 0.04, 0.06 (seed 3 has no partner): mean 0.04,
    # standard deviation 0.02, t = 0.04 / (0.02 / sqrt 3) = 3.4641 on 2
    # degrees of freedom. The 97.5% quantile of t(2) is 4.302653 (tables);
    # with 2 dof the two-sided p is 1 - t / sqrt(2 + t^2) = 0.074180.
    tuned = [_run('a', s, v, 'fine-tuned')
             for s, v in ((0, .72), (1, .64), (2, .86), (3, .9))]
    scratch = [_run('a', s, v) for s, v in ((0, .70), (1, .60), (2, .80))]
    c = paired(tuned, scratch)
    assert c.seeds == [0, 1, 2]
    assert c.mean == pytest.approx(0.04)
    half = 4.302653 * 0.02 / math.sqrt(3)
    assert (c.low, c.high) == (pytest.approx(0.04 - half, abs=1e-6),
                               pytest.approx(0.04 + half, abs=1e-6))
    assert c.p_value == pytest.approx(0.074180, abs=1e-5)
    assert paired(tuned[:1], scratch) is None  # one common seed


def test_table_verdicts_and_summary():
    runs = ([_run('b', s, v) for s, v in ((0, .60), (1, .62), (2, .61))]
            + [_run('b', s, v, 'fine-tuned')
               for s, v in ((0, .70), (1, .73), (2, .71))]
            + [_run('b', s, .8, 'chemprop', cpu=30.0) for s in (0, 1, 2)]
            + [_run('a', s, v) for s, v in ((0, .70), (1, .60))]
            + [_run('a', s, v, 'fine-tuned') for s, v in ((0, .60),
                                                          (1, .65))])
    sets = reach_sets(runs)
    assert list(sets) == ['a', 'b']
    probe = {'sets': {'b': [{'test_rocauc': .5}, {'test_rocauc': .7}]}}
    text = reach_markdown(sets, probe)
    row = next(line for line in text.splitlines() if line.startswith('| b'))
    cells = [c.strip() for c in row.strip('|').split('|')]
    assert cells[:6] == ['b', '0,1,2', '60.00 ± 14.14', '80.00 ± 0.00',
                         '61.00 ± 1.00', '71.33 ± 1.53']
    # Differences 10, 11, 10 points: mean 10.33, significant.
    assert cells[6].startswith('+10.33 [')
    assert cells[7] == '1.0 / 1.0 / 0.5'
    assert '**b**: fine-tuned − scratch = +10.33' in text
    assert 'significantly better at the 5% level' in text
    assert "chemprop 80.00, above the fine-tuned Graphormer's 71.33" in text
    assert 'CPU X' in text
    assert 'chemprop ran its default model for 50 epochs on b within 12 ' \
        'CPU minutes' in text
    # a: differences -10 and +5: no significant difference.
    summary = reach_summary(sets)
    assert 'significantly better on b +10.33' in summary
    assert 'no significant difference on a -2.50' in summary


def test_every_column_reads_the_seeds_all_columns_ran():
    # chemprop's default ran seeds 3-5 too (beside the best-from-SMILES
    # rows) and fine-tuned seed 3: each seed is its own split, so the table
    # reads seeds 0-2 in every column, and the verdict compares chemprop's
    # mean there (0.70), not over its six (0.75).
    runs = ([_run('b', s, .60 + s / 100) for s in (0, 1, 2)]
            + [_run('b', s, .70 + s / 100, 'fine-tuned') for s in range(4)]
            + [_run('b', s, .70 if s < 3 else .80, 'chemprop')
               for s in range(6)])
    text = reach_markdown(reach_sets(runs))
    row = next(line for line in text.splitlines() if line.startswith('| b'))
    cells = [c.strip() for c in row.strip('|').split('|')]
    assert cells[1] == '0,1,2'
    assert cells[3:6] == ['70.00 ± 0.00', '61.00 ± 1.00', '71.00 ± 1.00']
    assert "chemprop 70.00, below the fine-tuned Graphormer's 71.00" in text


def test_a_run_scored_otherwise_is_refused():
    with pytest.raises(ValueError, match="metric 'mae'"):
        reach_sets([dict(_run('a', 0, .5), metric='mae')])


def _zinc(seed, test, val=0.3, cpu=1500.0):
    return {'seed': seed, 'test_metric_at_best_val': test,
            'best_val_metric': val, 'cpu_time_s': cpu}


def test_ablation_table_and_verdict_by_hand():
    scratch = [_zinc(0, .40), _zinc(1, .42)]
    both = [_zinc(0, .20), _zinc(1, .22), _zinc(2, .24)]
    masked = [_zinc(0, .30, val=.28), _zinc(1, .32, val=.30)]
    table = ablation_table({'scratch': scratch, 'both': both,
                            'masked': masked, 'none': []})
    assert '| masked | 0,1 | 0.290 ± 0.014 | 0.310 ± 0.014 | 25.0 |' \
        in table
    assert '| none | — | n/a | n/a | — |' in table
    # Gain of both: 0.41 - 0.22 = 0.19; kept by masked: 0.41 - 0.31 = 0.10,
    # 53%. Welch, masked - both: difference 0.09, variances of the means
    # 0.0002/2 and 0.0004/3, se 0.015275, t = 5.892, dof
    # (0.0001 + 0.000133)^2 / (0.0001^2 / 1 + 0.000133^2 / 2) = 2.8824.
    text = ablation_verdict(scratch, both, masked)
    assert 'keeps 53% of the test-MAE gain' in text
    assert '(0.100 of 0.190)' in text and '= +0.090 test MAE' in text
    from scipy import stats
    p_value = 2 * stats.t.sf(0.09 / math.sqrt(0.0001 + 0.0004 / 3), 2.8824)
    assert f'Welch p = {p_value:.3f}' in text
    assert 'significantly worse than both objectives at the 5%' in text
    assert ablation_verdict(scratch, both, masked[:1]) == ''
    assert ablation_summary(scratch, both, masked) == (
        'ZINC-subset, backbone pretrained on masked atoms alone: 53% of the '
        f'test-MAE gain of both objectives kept; significantly worse than '
        f'both objectives (Welch p = {p_value:.3f}).\n')
    assert ablation_summary(scratch, both, []) == ''


REACH = REPO / 'benchmarks' / 'results' / 'reach'


@pytest.mark.skipif(not REACH.is_dir(), reason='no reach runs committed')
def test_committed_blocks_are_the_runs():
    from benchmarks.reach_table import report
    text, summary = report(
        REACH, REPO / 'benchmarks' / 'results' / 'descriptor_probe' /
        'probe.json')
    assert text in (REPO / 'benchmarks' / 'README.md').read_text(), (
        'benchmarks/README.md: run python benchmarks/reach_table.py --readme')
    assert summary in (REPO / 'README.md').read_text()
    assert text in (REACH / 'REACH.md').read_text()


@pytest.mark.skipif(not REACH.is_dir(), reason='no reach runs committed')
def test_committed_methods_of_a_seed_share_its_test_molecules():
    # Each seed's split is the same for every method (chemprop, from
    # scratch, fine-tuned, each with molecule features or not): the written
    # test molecules are the same ids in order.
    import csv
    from benchmarks.analysis.runs import load_runs
    from benchmarks.protocol.plan import load_plan
    from graphormer_sepnorm.data.text_files import open_text
    # The rows that ran seeds 3-5 keep their test predictions in the tree
    # (the goal's rows and chemprop's default); the search's other rows
    # come from trials whose plan keeps them out of git
    # (keep_test_predictions: false), and those kept before the plans said
    # so name the commit that holds theirs (benchmarks/README.md).
    ids, elsewhere, left_out = {}, [], set()
    for run in load_runs(REACH):
        if 'test_predictions' not in run:
            if 'test_predictions_in_commit' in run:
                elsewhere.append(run['test_predictions_in_commit'])
            left_out.add((run['protocol']['plan'], run['protocol']['trial'],
                          run['seed']))
            continue
        with open_text(Path(run['path']) / run['test_predictions']) as f:
            rows = [r['id'] for r in csv.DictReader(f)]
        ids.setdefault((run['benchmark'], run['seed']), []).append(rows)
    assert all(name.startswith('0125538:benchmarks/results/reach/')
               for name in elsewhere)
    for plan in {plan for plan, _, _ in left_out}:
        keeps = {(run.trial, run.seed): run.keep_test_predictions
                 for run in load_plan(REPO / plan, Path('runs/cpu'))}
        assert not any(keeps[trial, seed] for p, trial, seed in left_out
                       if p == plan), plan
    assert all(len(lists) >= 2 for (benchmark, seed), lists in ids.items()
               if benchmark in ('clintox', 'sider', 'tox21'))
    for key, lists in ids.items():
        assert all(rows == lists[0] for rows in lists), key


def test_the_fine_tuned_column_is_like_for_like_with_scratch(bundled_6000):
    # The bundled backbone's runs took fewer steps than from scratch, so
    # the column takes the 60,000-step backbone's, of scratch's norm and
    # steps (its ShareNorm runs left out), and says so.
    other = {'source': 'long.safetensors', 'task': 'pretraining',
             'pretraining': {'pretraining': {'steps': 60000}}}
    scratch = [dict(_run('b', s, v), norm='sep', steps=300)
               for s, v in ((0, .60), (1, .62))]
    bundled = [dict(_run('b', s, .9, 'fine-tuned'), norm='sep', steps=100)
               for s in (0, 1)]
    old = [dict(_run('b', s, v), init_from=other, norm=n, steps=300)
           for s, v, n in ((0, .70, 'sep'), (1, .74, 'sep'),
                           (0, .10, 'share'), (1, .10, 'share'))]
    sets = reach_sets(scratch + bundled + old)
    text = reach_markdown(sets)
    assert 'Graphormer fine-tuned from the 60,000-step backbone |' in text
    row = next(line for line in text.splitlines() if line.startswith('| b'))
    assert '| 61.00 ± 1.41 | 72.00 ± 2.83 | +11.00 [' in row
    assert reach_summary(sets).startswith(
        'Fine-tuned (the 60,000-step backbone) − scratch, ')
    # Once the bundled backbone's runs match scratch, they are the column.
    sets = reach_sets(scratch + [dict(r, steps=300) for r in bundled] + old)
    text = reach_markdown(sets)
    assert 'Graphormer fine-tuned from the backbone |' in text
    assert '| 61.00 ± 1.41 | 90.00 ± 0.00 |' in text
