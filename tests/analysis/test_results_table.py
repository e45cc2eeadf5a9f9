"""Results aggregation: hand-computed means, standard deviations, Welch's
test and times to accuracy; the script's files and README blocks."""
import contextlib
import functools
import importlib.util
import io
import json
import math
import subprocess
from pathlib import Path

import pytest

from benchmarks.analysis.comparisons import p_text, welch
from benchmarks.analysis.findings import best_sentence, findings_markdown
from benchmarks.analysis.formatting import mean_std
from benchmarks.analysis.readme_blocks import (README_BEGIN, README_END,
                                               readme_markers)
from benchmarks.analysis.results import (comparison_table, goal_verdicts,
                                         protocol_line, results_summary,
                                         results_table, stand_in_note,
                                         summary_rows, verdicts)
from benchmarks.analysis.runs import (Group, group_runs, load_runs,
                                      minutes_to_reach)
from benchmarks.analysis.tuning import trials_table

REPO = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=1)
def results_table_script():
    """scripts/results_table.py as a module, loaded once."""
    spec = importlib.util.spec_from_file_location(
        'results_table_script', REPO / 'scripts' / 'results_table.py')
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def run_results_table(argv) -> subprocess.CompletedProcess:
    """scripts/results_table.py's main run in this process (its imports are
    paid once for all these tests), as a completed process with its exit
    status and output."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = results_table_script().main([str(a) for a in argv])
    return subprocess.CompletedProcess(argv, code, out.getvalue(),
                                       err.getvalue())


def write_run(root, name, dataset, norm, seed, test, val, metric='mae',
              family=None, cpu_minutes=(1.0, 2.0), trial=None,
              predictions=None, **labels):
    """A run directory; :obj:`predictions` ({id: (target, prediction)})
    becomes its test_predictions.csv."""
    run = root / name
    run.mkdir(parents=True)
    results = {
        'dataset': dataset, 'norm': norm, 'seed': seed, 'metric': metric,
        'test_metric_at_best_val': test, 'best_val_metric': val,
        'num_parameters': 489_000, 'steps': 1000, 'wall_time_s': 300.0,
        'cpu_time_s': 60.0 * cpu_minutes[-1],
        'hardware': {'device_name': 'AMD EPYC (2 cores)'}}
    if family:
        results['model_family'] = family
    results.update(labels)  # benchmark, model_label
    if trial:
        results['protocol'] = {'trial': trial,
                               'overrides': [f'optim.lr={trial}']}
    if predictions is not None:
        results['test_predictions'] = 'test_predictions.csv'
        (run / 'test_predictions.csv').write_text(
            'id,target,prediction\n' + ''.join(
                f'{i},{y},{p}\n' for i, (y, p) in predictions.items()))
    (run / 'results.json').write_text(json.dumps(results))
    worse = val - 0.1 if metric == 'rocauc' else val + 0.1
    (run / 'metrics.csv').write_text(
        f'epoch,step,val_{metric},cpu_time_s\n'
        f'0,10,{worse},{60 * cpu_minutes[0]}\n'
        f'1,20,{val},{60 * cpu_minutes[1]}\n')


@pytest.fixture
def runs(tmp_path):
    write_run(tmp_path, 'a', 'zinc_subset', 'sep', 0, 0.14, 0.15)
    write_run(tmp_path, 'b', 'zinc_subset', 'sep', 1, 0.16, 0.17)
    write_run(tmp_path, 'c', 'zinc_subset', 'share', 0, 0.20, 0.21)
    write_run(tmp_path, 'c2', 'zinc_subset', 'share', 1, 0.22, 0.23)
    write_run(tmp_path, 'd', 'molhiv', 'sep', 0, 0.75, 0.80, 'rocauc')
    write_run(tmp_path, 'e', 'zinc_subset', None, 0, 0.30, 0.31,
              family='chemprop D-MPNN', cpu_minutes=(3.0, 4.0))
    return tmp_path


def test_mean_and_sample_std():
    assert mean_std([0.14, 0.16]) == '0.150 ± 0.014'  # std = 0.02/sqrt(2)
    assert mean_std([0.2]) == '0.200'
    assert mean_std([]) == 'n/a'


def test_welch_by_hand():
    # a: mean 2, variance 1; b: mean 6, variance 4 (n = 3 each).
    # se^2 = 1/3 + 4/3 = 5/3; t = -4 / sqrt(5/3);
    # dof = (5/3)^2 / ((1/3)^2 / 2 + (4/3)^2 / 2) = 50/17.
    from scipy import stats
    c = welch([1.0, 2.0, 3.0], [4.0, 6.0, 8.0])
    assert c.difference == pytest.approx(-4.0)
    assert c.dof == pytest.approx(50 / 17)
    t = -4 / math.sqrt(5 / 3)
    assert c.p_value == pytest.approx(2 * stats.t.cdf(t, 50 / 17))
    half = stats.t.ppf(0.975, 50 / 17) * math.sqrt(5 / 3)
    assert (c.low, c.high) == pytest.approx((-4 - half, -4 + half))
    # A 95% interval excludes 0 exactly when p < 0.05.
    assert (c.high < 0) == (c.p_value < 0.05)
    with pytest.raises(ValueError, match='two runs'):
        welch([1.0], [2.0, 3.0])


def test_small_p_values_are_not_written_as_zero():
    assert p_text(0.0364) == 'p = 0.036'
    assert p_text(0.001) == 'p = 0.001'
    assert p_text(4e-7) == 'p < 0.001'
    assert p_text(4e-7, named=False) == '< 0.001'
    assert p_text(0.5, named=False) == '0.500'


def test_groups_tables_and_verdicts(runs):
    groups = group_runs(load_runs(runs))
    assert [(g.dataset, g.label, len(g.runs)) for g in groups] == [
        ('molhiv', 'Graphormer + SepNorm', 1),
        ('zinc_subset', 'Graphormer + SepNorm', 2),
        ('zinc_subset', 'Graphormer (ShareNorm)', 2),
        ('zinc_subset', 'chemprop D-MPNN', 1)]
    table = results_table(groups)
    # zinc_subset rows name the stand-in training split they trained on.
    assert ('| zinc_subset (train: ZINC-proxy) | Graphormer + SepNorm | MAE '
            '| 0.150 ± 0.014 | 0,1 (2) | 0.160 ± 0.014 | 1,000 | 2.0 ± 0.0 '
            '| 0.144 |') in table
    assert '| molhiv | Graphormer + SepNorm | ROC-AUC (%) | 75.00 |' in table
    assert ('| zinc_subset (train: ZINC-proxy) | chemprop D-MPNN | MAE '
            '| 0.300 |') in table
    assert stand_in_note(groups).startswith('ZINC-proxy: the real '
                                            'ZINC-subset validation')
    assert stand_in_note(groups[:1]) == ''  # molhiv alone
    # sep - share = 0.15 - 0.21 = -0.06: SepNorm better (lower MAE).
    comparison = comparison_table(groups)
    assert ("| zinc_subset | MAE | SepNorm − ShareNorm | each run's own "
            "| -0.060 |") in comparison
    assert '| SepNorm |' in comparison
    # One convention: the signed difference first − second, and its CI.
    assert ("test MAE: SepNorm − ShareNorm = -0.060 on average (better; "
            "2 vs 2 seeds; 95% CI of the difference [-") in \
        verdicts(groups)


def test_chemprop_with_molecule_featurizers_is_its_own_row(runs):
    # A run of --molecule-featurizers records them; the plain chemprop
    # row (no such key in its results.json) keeps its label.
    write_run(runs, 'g', 'zinc_subset', None, 0, 0.25, 0.26,
              family='chemprop D-MPNN',
              molecule_featurizers=['rdkit_2d', 'morgan_count'])
    groups = group_runs(load_runs(runs))
    assert [(g.label, g.test) for g in groups if not g.is_graphormer] == [
        ('chemprop D-MPNN', [0.30]),
        ('chemprop D-MPNN + rdkit_2d + morgan_count', [0.25])]
    assert ('| chemprop D-MPNN + rdkit_2d + morgan_count | MAE | 0.250 |'
            in results_table(groups))


def test_rows_are_labelled_by_how_test_was_read(runs):
    """A results.json without test_protocol was written the old way: a
    Graphormer run scored test at every validation, chemprop once at the
    end; a run that records its protocol is counted by it."""
    write_run(runs, 'f', 'zinc_subset', 'sep', 2, 0.15, 0.16,
              test_protocol='test scored once at the end, by the '
                            'best-validation checkpoint')
    line = protocol_line(group_runs(load_runs(runs)))
    assert line.startswith(
        'How test was read: in the 5 Graphormer runs, test scored at every '
        'validation and read at the best-validation epoch; in the 1 '
        'Graphormer runs and the 1 chemprop D-MPNN runs, test scored once at '
        'the end, by the best-validation checkpoint. New training runs')
    assert line in results_summary(group_runs(load_runs(runs)))


def test_against_another_family_on_the_molecules_both_predicted(tmp_path):
    """chemprop could not read molecule 3: SepNorm is scored without it.
    SepNorm MAEs on molecules 0-2: seed 0 (0.1 + 0.2 + 0.3) / 3 = 0.2,
    seed 1 0.3; chemprop 0.5 and 0.7. Molecule 3 (error 9) would have
    moved SepNorm's MAE to about 2.4."""
    def predictions(errors):
        return {i: (1.0, 1.0 + e) for i, e in enumerate(errors)}
    write_run(tmp_path, 's0', 'molhiv_like', 'sep', 0, 2.4, 0.2,
              predictions=predictions([0.1, 0.2, 0.3, 9.0]))
    write_run(tmp_path, 's1', 'molhiv_like', 'sep', 1, 2.5, 0.3,
              predictions=predictions([0.2, 0.3, 0.4, 9.0]))
    for seed, errors in ((0, [0.4, 0.5, 0.6]), (1, [0.6, 0.7, 0.8])):
        write_run(tmp_path, f'c{seed}', 'molhiv_like', None, seed,
                  sum(errors) / 3, 0.5, family='chemprop D-MPNN',
                  predictions=predictions(errors))
    groups = group_runs(load_runs(tmp_path))
    comparison = comparison_table(groups)
    # (0.2 + 0.3) / 2 - (0.5 + 0.7) / 2 = -0.35
    assert ('| molhiv_like | MAE | SepNorm − chemprop D-MPNN | 3 (common) '
            '| -0.350 |') in comparison
    sentence = verdicts(groups)
    assert ("test MAE: SepNorm − chemprop D-MPNN = -0.350 on average on "
            "the 3 test molecules both predicted (better;") in sentence
    assert 'CPU minutes per run 2.0 ± 0.0 vs 2.0 ± 0.0' in sentence


def test_a_graphormer_variant_on_a_benchmark_csv(tmp_path):
    """Runs on a CSV of ZINC's molecules (dataset 'csv', with the protocol's
    benchmark and variant) form their own Graphormer row under zinc_subset
    and are compared with chemprop. Their ids are CSV rows, so
    id 1 names another molecule (label 5) than chemprop's id 1 (label 1):
    no common molecules, and each run's reported test metric is used."""
    variant = dict(benchmark='zinc_subset', variant='from SMILES')
    for seed, test in ((0, 0.20), (1, 0.22)):
        write_run(tmp_path, f'v{seed}', 'csv', 'sep', seed, test, test,
                  predictions={1: (5.0, 5.0), 2: (6.0, 6.0)}, **variant)
        write_run(tmp_path, f'c{seed}', 'zinc_subset', None, seed,
                  test + 0.1, test, family='chemprop D-MPNN',
                  predictions={0: (0.0, 0.0), 1: (1.0, 1.0)})
    groups = group_runs(load_runs(tmp_path))
    assert [(g.dataset, g.label, g.is_graphormer, g.is_sepnorm)
            for g in groups] == [
        ('zinc_subset', 'Graphormer + SepNorm, from SMILES', True, True),
        ('zinc_subset', 'chemprop D-MPNN', False, False)]
    comparison = comparison_table(groups)
    assert ("| zinc_subset | MAE | SepNorm [from SMILES] − "
            "chemprop D-MPNN | each run's own | -0.100 |") in comparison
    trials = trials_table(load_runs(tmp_path))
    assert '### zinc_subset, from SMILES: best validation MAE' in trials


def test_pretrained_rows_against_scratch_share_and_chemprop(tmp_path):
    """Fine-tuned rows (the plans' variant ends in 'fine-tuned from its
    pretrained backbone') are compared with their from-scratch twin of the
    same norm, SepNorm with ShareNorm, and each with chemprop; the goal
    line says by how much the SepNorm row missed or met its goal."""
    pretrained = 'fine-tuned from its pretrained backbone'
    tests = {('sep', pretrained): (0.770, 0.790),
             ('share', pretrained): (0.750, 0.760),
             ('sep', None): (0.720, 0.740)}
    for (norm, variant), values in tests.items():
        for seed, test in enumerate(values):
            labels = {'variant': variant} if variant else {}
            write_run(tmp_path, f'{norm}_{bool(variant)}_{seed}', 'molhiv',
                      norm, seed, test, test, 'rocauc',
                      cpu_minutes=(10.0, 20.0 + seed), **labels)
    for seed, test in enumerate((0.775, 0.779)):
        write_run(tmp_path, f'chemprop{seed}', 'molhiv', None, seed, test,
                  test, 'rocauc', family='chemprop D-MPNN',
                  cpu_minutes=(10.0, 30.0))
    groups = group_runs(load_runs(tmp_path))
    table = comparison_table(groups)
    label = f'Graphormer + SepNorm, {pretrained}'
    short, share_short = f'SepNorm [{pretrained}]', f'ShareNorm [{pretrained}]'
    by_hand = {
        (short, share_short): welch([0.770, 0.790], [0.750, 0.760]),
        (short, 'SepNorm'): welch([0.770, 0.790], [0.720, 0.740]),
        (short, 'chemprop D-MPNN'): welch([0.770, 0.790], [0.775, 0.779]),
        (share_short, 'chemprop D-MPNN'): welch([0.750, 0.760],
                                                [0.775, 0.779]),
    }
    for (first, second), c in by_hand.items():
        assert (f"| molhiv | ROC-AUC (%) | {first} − {second} | each run's "
                f"own | {100 * c.difference:+.2f} | [{100 * c.low:+.2f}, "
                f"{100 * c.high:+.2f}] |") in table, (first, second)
    # No pretrained ShareNorm row without a scratch ShareNorm twin.
    assert f'{share_short} − ShareNorm' not in table
    # Each verdict names the fine-tuned row and its twin apart.
    assert (f"- **molhiv**, test ROC-AUC (%): {short} − SepNorm = "
            f"{100 * by_hand[(short, 'SepNorm')].difference:+.2f} on average "
            f"(better;") in verdicts(groups)
    goals = goal_verdicts(groups)
    assert goals == (
        f"- **Goal, molhiv**: {label}: mean test ROC-AUC (%) 78.00 over 2 "
        f"seeds in 20.5 ± 0.7 CPU min per run; goal ≥ 78.00: met (mean − goal "
        f"= +0.00) "
        f"(chemprop D-MPNN 77.70 in 30.0 ± 0.0 CPU min per run).\n")
    summary = results_summary(groups)
    assert goals in summary
    # The summary leaves the comparisons to the full results, and shows
    # the recipe's row, the best-validation one and chemprop's.
    assert ' − ' not in summary.split('- **Goal')[0]
    assert '- **Backbone' not in summary and '- **Against' not in summary
    assert [g.label for g in summary_rows(groups)] == [
        'Graphormer + SepNorm', label, 'chemprop D-MPNN']
    assert '3 of the 4 rows of the [full results]' in summary


@pytest.mark.parametrize('variant, pretrained, twin', [
    ('from SMILES (OGB features), fine-tuned from its pretrained backbone',
     True, 'from SMILES (OGB features)'),
    ('from SMILES (OGB features), fine-tuned from its 60,000-step '
     'pretrained backbone', True, 'from SMILES (OGB features)'),
    ('fine-tuned from its pretrained backbone', True, None),
    # Fine-tuned, but the variant goes on: no twin by this rule.
    ('fine-tuned from its 60,000-step pretrained backbone, with the Morgan '
     'count fingerprint in the graph token', False, None),
    ('from SMILES (OGB features)', False, None),
])
def test_a_pretrained_variant_and_its_scratch_twin(variant, pretrained, twin):
    group = Group('molhiv', f'sep, {variant}', 'rocauc',
                  [{'norm': 'sep', 'variant': variant, 'seed': 0}])
    assert group.is_pretrained is pretrained
    if pretrained:
        assert group.scratch_variant == twin


def test_summary_rows_are_chosen_on_validation(tmp_path):
    """README's table keeps the recipe's rows (no variant), the chemprop
    row and the Graphormer row with the best mean validation, not the best
    test; a family of one seed is not chosen however high its validation.
    Its goal line is that of the pretrained SepNorm row with the best mean
    validation alone."""
    pretrained = 'fine-tuned from its pretrained backbone'
    featured = f'with RDKit 2D features, {pretrained}'
    rows = {  # (norm, variant): [(test, val)] per seed
        ('sep', None): [(0.70, 0.70), (0.72, 0.71)],
        ('share', None): [(0.69, 0.69)],
        ('sep', pretrained): [(0.80, 0.74), (0.82, 0.75)],  # best test
        ('sep', featured): [(0.76, 0.78), (0.77, 0.79)],  # best validation
        ('share', pretrained): [(0.60, 0.95)],  # one seed
    }
    for (norm, variant), seeds in rows.items():
        for seed, (test, val) in enumerate(seeds):
            labels = {'variant': variant} if variant else {}
            write_run(tmp_path, f'{norm}_{variant}_{seed}', 'molhiv', norm,
                      seed, test, val, 'rocauc', **labels)
    for seed in (0, 1):
        write_run(tmp_path, f'chemprop{seed}', 'molhiv', None, seed, 0.78,
                  0.8, 'rocauc', family='chemprop D-MPNN')
    groups = group_runs(load_runs(tmp_path))
    shown = summary_rows(groups)
    assert sorted(g.label for g in shown) == sorted([
        'Graphormer + SepNorm', 'Graphormer (ShareNorm)',
        f'Graphormer + SepNorm, {featured}', 'chemprop D-MPNN'])
    assert [g.label for g in shown] == [g.label for g in groups
                                        if g in shown]
    summary = results_summary(groups)
    assert summary.startswith(results_table(shown, detailed=False))
    assert '| Graphormer + SepNorm, with RDKit 2D features, fine-tuned ' \
        'from its pretrained backbone | ROC-AUC (%) | 76.50 ± 0.71 | 2 | ' \
        '78.50 ± 0.71 |' in summary
    assert '4 of the 6 rows' in summary
    goals = [line for line in summary.splitlines()
             if line.startswith('- **Goal')]
    assert len(goals) == 1 and featured in goals[0]
    assert len(goal_verdicts(groups).splitlines()) == 2


@pytest.mark.parametrize('sep, share, sepnorm_line, best_line', [
    ((0.20, 0.22), (0.30, 0.32),
     'SepNorm − ShareNorm = -0.100 (95% CI [-0.161, -0.039], Welch p = '
     '0.019): better on average',
     'Best: Graphormer + SepNorm; against the next, SepNorm − ShareNorm = '
     '-0.100 (95% CI [-0.161, -0.039], Welch p = 0.019): better on average'),
    ((0.30, 0.32), (0.20, 0.22),
     'SepNorm − ShareNorm = +0.100 (95% CI [+0.039, +0.161], Welch p = '
     '0.019): worse on average',
     'Best: Graphormer (ShareNorm); against the next, ShareNorm − SepNorm = '
     '-0.100 (95% CI [-0.161, -0.039], Welch p = 0.019): better on average'),
], ids=['sepnorm_ahead', 'sharenorm_ahead'])
def test_findings_follow_the_numbers(tmp_path, sep, share, sepnorm_line,
                                     best_line):
    """Swapping the two norms' MAEs flips the sign and the direction of
    SepNorm − ShareNorm, and the best row is named whichever it is. By
    hand: difference ∓0.1; each side's variance 0.0002, so se =
    sqrt(0.0002 / 2 * 2) = 0.01414 with 2 degrees of freedom; half the
    interval t(0.975, 2) * se = 4.303 * 0.01414 = 0.061; t = 7.071, whose
    two-sided p with 2 degrees of freedom is 1 - t / sqrt(t² + 2) =
    0.019."""
    for seed in (0, 1):
        write_run(tmp_path, f'sep{seed}', 'zinc_subset', 'sep', seed,
                  sep[seed], sep[seed])
        write_run(tmp_path, f'share{seed}', 'zinc_subset', 'share', seed,
                  share[seed], share[seed])
    text = findings_markdown(group_runs(load_runs(tmp_path)))
    assert text.startswith('Each difference below is row − reference')
    assert '**zinc_subset** (test MAE, lower is better):' in text
    assert f'- {sepnorm_line}, significant at the 5% level.\n' in text
    assert f'- {best_line}, significant at the 5% level.\n' in text


def test_findings_name_another_family_best_and_order_time_to_accuracy(
        tmp_path):
    """chemprop ahead of both norms: it is the best row, its difference
    against the next row is written chemprop − SepNorm (positive, better),
    and SepNorm's against it the other way round. Time to accuracy
    (threshold: ShareNorm's mean best validation, 0.70): chemprop reaches it
    at its first validation (1 CPU min), every SepNorm run at its second
    (10 min), one ShareNorm run of two at its second (8 min), so ShareNorm
    comes last although its one run was faster than SepNorm's."""
    scores = {'sep': (0.71, 0.72, 0.73), 'share': (0.68, 0.72),
              'chemprop': (0.90, 0.91, 0.92)}
    minutes = {'sep': (5.0, 10.0), 'share': (4.0, 8.0),
               'chemprop': (1.0, 2.0)}
    for model, values in scores.items():
        family = 'chemprop D-MPNN' if model == 'chemprop' else None
        for seed, value in enumerate(values):
            write_run(tmp_path, f'{model}{seed}', 'molhiv',
                      None if family else model, seed, value, value,
                      'rocauc', family=family, cpu_minutes=minutes[model])
    text = findings_markdown(group_runs(load_runs(tmp_path)))
    assert ('- **molhiv**: Graphormer + SepNorm (seeds 0,1,2); Graphormer '
            '(ShareNorm) (seeds 0,1); chemprop D-MPNN (seeds 0,1,2).') in text
    assert ': 2.0 to 10.0 over the 8 runs (molhiv 2.0 to 10.0).' in text
    assert ('- Mean test ROC-AUC (%), best first (CPU minutes per run): '
            'chemprop D-MPNN 91.00 (2.0 ± 0.0); Graphormer + SepNorm 72.00 '
            '(10.0 ± 0.0); Graphormer (ShareNorm) 70.00 (8.0 ± 0.0).') in text
    ahead = welch(scores['chemprop'], scores['sep'])
    assert ahead.p_value < 0.001
    assert (f"- Best: chemprop D-MPNN; against the next, chemprop D-MPNN − "
            f"SepNorm = +19.00 (95% CI [{100 * ahead.low:+.2f}, "
            f"{100 * ahead.high:+.2f}], Welch p < 0.001): better on "
            f"average, significant at the 5% level.") in text
    assert (f"- SepNorm − chemprop D-MPNN = -19.00 (95% CI "
            f"[{-100 * ahead.high:+.2f}, {-100 * ahead.low:+.2f}], Welch "
            f"p < 0.001): worse on average, significant") in text
    norms = welch(scores['sep'], scores['share'])
    assert (f"- SepNorm − ShareNorm = +2.00 (95% CI [{100 * norms.low:+.2f}, "
            f"{100 * norms.high:+.2f}], Welch {p_text(norms.p_value)}): "
            f"better on average, not significant at the 5% level.") in text
    assert ('- Time to accuracy (best validation ROC-AUC (%) ≥ 70.00, the '
            'weakest row\'s mean best validation), by the share of runs that '
            'reached it, then by their mean CPU minutes to reach it: chemprop '
            'D-MPNN 1.0 (3 of 3 runs); Graphormer + SepNorm 10.0 (3 of 3 '
            'runs); Graphormer (ShareNorm) 8.0 (1 of 2 runs).') in text


def test_best_row_without_a_test(runs):
    """A best row alone on its dataset, or whose next row has one run,
    is named without Welch's test."""
    groups = group_runs(load_runs(runs))
    assert ('- Best: Graphormer + SepNorm, the only row.'
            in findings_markdown(groups))
    sep, chemprop = groups[1], groups[3]  # zinc_subset: 2 runs and 1 run
    assert best_sentence([sep, chemprop]) == (
        'Best: Graphormer + SepNorm; next: chemprop D-MPNN (no test: a row '
        'has fewer than two runs).')


def test_a_missed_goal_says_by_how_much(tmp_path):
    variant = 'from SMILES (OGB features), fine-tuned from its pretrained ' \
        'backbone'
    for seed, test in enumerate((0.30, 0.32)):
        write_run(tmp_path, f'p{seed}', 'csv', 'sep', seed, test, test,
                  benchmark='zinc_subset', variant=variant)
    lines = goal_verdicts(group_runs(load_runs(tmp_path)))
    assert 'mean test MAE 0.310 over 2 seeds' in lines
    assert 'goal ≤ 0.215: missed (mean − goal = +0.095).' in lines


def test_seed_ensemble_by_hand(tmp_path):
    """Three seeds, four molecules (label 0 each). Per molecule, the
    members' mean / population std / abs. error of the mean:
    0: (1, 1, 1)  -> 1, 0,     1;   1: (0, 0, 3) -> 1, 1.414, 1;
    2: (2, 2, 2)  -> 2, 0,     2;   3: (3, 4, 5) -> 4, 0.816, 4.
    Ensemble MAE (1 + 1 + 2 + 4) / 4 = 2; members' MAEs 1.5, 1.75, 2.75.
    Spearman: std ranks (1.5, 4, 1.5, 3), error ranks (1.5, 1.5, 3, 4),
    both with mean 2.5: the Pearson correlation of the ranks is
    (1 - 1.5 - 0.5 + 0.75) / sqrt(4.5 * 4.5) = -1/18. Its p-value (t-test
    with n - 2 = 2 degrees of freedom, whose tail has a closed form) is
    1 - |rho| = 17/18."""
    from benchmarks.analysis.results import ensemble_table
    from benchmarks.analysis.test_predictions import seed_ensemble
    members = [(1, 0, 2, 3), (1, 0, 2, 4), (1, 3, 2, 5)]
    for seed, values in enumerate(members):
        write_run(tmp_path, f's{seed}', 'zinc_subset', 'sep', seed, 0.0,
                  0.0, predictions={i: (0.0, v) for i, v in
                                    enumerate(values)})
    runs = load_runs(tmp_path)
    report = seed_ensemble(runs)
    assert (report.members, report.molecules) == (3, 4)
    assert report.metric == pytest.approx(2.0)
    assert report.member_metrics == pytest.approx([1.5, 1.75, 2.75])
    assert report.spearman == pytest.approx(-1 / 18)
    # Sorted by std (ties in id order): molecules 0, 2, 3, 1.
    assert report.error_by_std_quartile == pytest.approx([1, 2, 4, 1])
    table = ensemble_table(group_runs(runs))
    assert ('| zinc_subset | Graphormer + SepNorm | 3 | 4 | MAE 2.000 '
            '| 2.000 | -0.056 (p = 0.944) |') in table
    assert seed_ensemble(runs[:1]) is None


def test_test_prediction_plots(tmp_path):
    """A parity plot for regression and ROC curves for binary runs, written
    only where the runs kept test predictions."""
    from benchmarks.analysis.result_plots import plot_test_predictions
    for seed in (0, 1):
        write_run(tmp_path, f'z{seed}', 'zinc_subset', 'sep', seed, 0.1, 0.1,
                  predictions={i: (i / 10, i / 10 + 0.1 * seed)
                               for i in range(20)})
        write_run(tmp_path, f'h{seed}', 'molhiv', 'sep', seed, 0.7, 0.7,
                  'rocauc', predictions={i: (float(i % 2), (i + seed) / 30)
                                         for i in range(20)})
    write_run(tmp_path, 'no_predictions', 'other', 'sep', 0, 0.1, 0.1)
    paths = plot_test_predictions(group_runs(load_runs(tmp_path)),
                                  tmp_path / 'figs')
    assert [p.name for p in paths] == ['test_predictions_molhiv.png',
                                       'test_predictions_zinc_subset.png']
    assert all(p.stat().st_size > 5000 for p in paths)


def test_figures_are_palette_pngs_that_look_like_the_true_colour_ones(
        tmp_path):
    import io

    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import numpy as np
    from PIL import Image

    from benchmarks.analysis.result_plots import PALETTE_COLOURS, _save
    fig, ax = plt.subplots(figsize=(4, 3))
    x = np.linspace(0, 6, 200)
    for colour in ('tab:red', 'tab:blue', 'tab:purple'):
        ax.plot(x, np.sin(x + len(colour)), color=colour)
        ax.fill_between(x, np.sin(x) - 0.2, np.sin(x) + 0.2, color=colour,
                        alpha=0.2)
    ax.set_title('validation ROC-AUC')
    fig.tight_layout()
    true_colour = io.BytesIO()
    fig.savefig(true_colour, format='png', dpi=110)
    path = _save(fig, tmp_path, 'figure.png')
    with Image.open(true_colour) as image:
        expected = np.asarray(image.convert('RGB'), dtype=float)
        assert len(image.convert('RGB').getcolors(1 << 24)) > PALETTE_COLOURS
    with Image.open(path) as image:
        assert image.mode == 'P'
        saved = np.asarray(image.convert('RGB'), dtype=float)
    assert saved.shape == expected.shape
    # Off by under one level of 255 per channel on average, and the
    # background is still pure white.
    assert np.abs(saved - expected).mean() < 1.0
    assert (saved[0, 0] == 255).all()
    assert path.stat().st_size < len(true_colour.getvalue()) / 2


def test_time_to_accuracy(runs):
    run = load_runs(runs / 'a')[0]  # val 0.25 at 1 CPU min, 0.15 at 2
    assert minutes_to_reach(run, 0.3) == pytest.approx(1.0)
    assert minutes_to_reach(run, 0.2) == pytest.approx(2.0)
    assert minutes_to_reach(run, 0.1) is None


def test_trials_table_orders_by_validation(tmp_path):
    for trial, offset in (('5e-4', 0.0), ('1e-3', -0.05)):
        for norm in ('sep', 'share'):
            write_run(tmp_path, f'{trial}/{norm}', 'zinc_subset', norm, 0,
                      None, 0.5 + offset + (norm == 'share') * 0.01,
                      trial=trial)
    table = trials_table(load_runs(tmp_path))
    rows = [line for line in table.splitlines() if line.startswith('| 1e-3')
            or line.startswith('| 5e-4')]
    assert rows[0].startswith('| 1e-3 | `optim.lr=1e-3` | 1,000 | 0.450 (0: '
                              '0.450) | 0.460 (0: 0.460) | 0.455 | no |')
    assert rows[1].startswith('| 5e-4')


def test_script_writes_results_figures_and_readme(runs, tmp_path):
    readme = tmp_path / 'README.md'
    readme.write_text(f'# x\n{README_BEGIN}\nPLACEHOLDER\n{README_END}\nafter\n')
    output, figures = tmp_path / 'out' / 'RESULTS.md', tmp_path / 'figs'
    result = run_results_table(
        ['--runs',
         str(runs), '--output', str(output), '--figures', str(figures),
         '--readme', str(readme)])
    assert result.returncode == 0, result.stderr
    assert '0.150 ± 0.014' in output.read_text()
    text = readme.read_text()
    assert 'PLACEHOLDER' not in text and '0.150 ± 0.014' in text
    assert text.endswith(f'{README_END}\nafter\n')
    for name in ('val_curves_zinc_subset.png', 'val_curves_molhiv.png',
                 'time_to_accuracy_zinc_subset.png'):
        assert (figures / name).stat().st_size > 1000
    assert '](../figs/val_curves_zinc_subset.png)' in output.read_text()


def test_each_readme_block_goes_where_it_is(runs, tmp_path):
    """The full results go to the README holding their block, with figure
    links relative to that README; the table alone to the one holding the
    summary block; a README list without the full results' block is an
    error that names the markers."""
    summary_begin, summary_end = readme_markers('results-summary')
    top = tmp_path / 'README.md'
    top.write_text(f'# x\n{summary_begin}\nOLD\n{summary_end}\nafter\n')
    full = tmp_path / 'benchmarks' / 'README.md'
    full.parent.mkdir()
    findings_begin, findings_end = readme_markers('results-findings')
    full.write_text(f'{findings_begin}\nOLD\n{findings_end}\n'
                    f'{README_BEGIN}\nOLD\n{README_END}\n')
    command = ['--runs', str(runs), '--output', str(tmp_path / 'RESULTS.md'),
               '--figures', str(tmp_path / 'figs'), '--readme']
    result = run_results_table(command + [str(top), str(full)])
    assert result.returncode == 0, result.stderr
    text = top.read_text()
    assert text.endswith(f'{summary_end}\nafter\n') and 'OLD' not in text
    table = text.split(summary_begin + '\n', 1)[1].split(summary_end, 1)[0]
    groups = group_runs(load_runs(runs))
    assert table.startswith(results_table(summary_rows(groups), detailed=False))
    assert table.endswith('Hardware: AMD EPYC (2 cores).\n')
    assert '**Comparisons**' not in table and '![' not in table
    text = full.read_text()
    assert 'OLD' not in text and '**Comparisons**' in text
    findings = text.split(findings_begin + '\n', 1)[1].split(findings_end,
                                                             1)[0]
    assert findings == findings_markdown(group_runs(load_runs(runs)))
    assert '](../figs/val_curves_zinc_subset.png)' in text
    result = run_results_table(command + [str(top)])
    assert result.returncode == 2
    assert f'none of {top} has the generated results-table block' \
        in result.stderr and README_BEGIN in result.stderr


def test_best_from_smiles_blocks_read_the_reach_runs_too(runs, tmp_path,
                                                         tmp_path_factory):
    """--readme writes the from-smiles table and its summary line from the
    final runs and the reach runs of --reach."""
    from benchmarks.analysis.from_smiles import (from_smiles_markdown,
                                                 from_smiles_sets,
                                                 from_smiles_summary)
    reach = tmp_path_factory.mktemp('reach')  # beside the final runs
    for seed in (0, 1):
        write_run(reach, f's{seed}', 'csv', 'sep', seed, 0.7 + seed / 100,
                  0.6, 'rocauc', benchmark='tox21')
        write_run(reach, f'c{seed}', 'csv', None, seed, 0.8 - seed / 100,
                  0.6, 'rocauc', family='chemprop D-MPNN', benchmark='tox21')
    names = ('from-smiles', 'from-smiles-summary', 'results-table')
    readme = tmp_path / 'README.md'
    readme.write_text(''.join('{}\nOLD\n{}\n'.format(*readme_markers(n))
                              for n in names))
    result = run_results_table(
        ['--runs', runs, '--reach', reach, '--output',
         tmp_path / 'RESULTS.md', '--figures', tmp_path / 'figs',
         '--readme', readme])
    assert result.returncode == 0, result.stderr
    sets = from_smiles_sets(load_runs(runs) + load_runs(reach))
    text = readme.read_text()
    assert 'OLD' not in text
    assert from_smiles_markdown(sets) in text
    assert from_smiles_summary(sets) in text
    # 70.5 − 79.5; t = -0.09 / 0.0070711 on 2 dof: p = 1 - |t| / sqrt(2 + t^2)
    assert 'Tox21 -9.00 (0.006)' in text


def test_committed_readme_summary_is_the_committed_runs():
    """README.md's results table is what the committed runs give (its
    numbers are generated, not typed)."""
    begin, end = readme_markers('results-summary')
    readme = (REPO / 'README.md').read_text()
    committed = readme.split(begin + '\n', 1)[1].split(end, 1)[0]
    runs = group_runs(load_runs(REPO / 'benchmarks' / 'results' / 'runs'))
    assert committed == results_summary(runs), (
        'README.md\'s results table is stale; run python '
        'scripts/results_table.py --readme')


def test_committed_findings_are_the_committed_runs():
    """The sentences of benchmarks/README.md's "What the runs say" are what
    the committed runs give (which row is ahead is generated, not
    typed)."""
    begin, end = readme_markers('results-findings')
    readme = (REPO / 'benchmarks' / 'README.md').read_text()
    committed = readme.split(begin + '\n', 1)[1].split(end, 1)[0]
    runs = group_runs(load_runs(REPO / 'benchmarks' / 'results' / 'runs'))
    assert committed == findings_markdown(runs), (
        'benchmarks/README.md\'s "What the runs say" block is stale; run '
        'python scripts/results_table.py --readme')


def test_missing_runs_folder_is_a_clear_error(tmp_path):
    result = run_results_table(
        ['--runs',
         str(tmp_path / 'none')])
    assert result.returncode == 2 and 'No run directory' in result.stderr


def test_tuning_table_alone_before_any_final_run(tmp_path):
    tuning = tmp_path / 'tuning'
    write_run(tuning, '5e-4/sep', 'zinc_subset', 'sep', 0, None, 0.5,
              trial='5e-4')
    result = run_results_table(
        ['--runs',
         str(tmp_path / 'none'), '--tuning', str(tuning), '--output',
         str(tmp_path / 'RESULTS.md')])
    assert result.returncode == 0, result.stderr
    assert '| 5e-4 | `optim.lr=5e-4`' in (tuning / 'TRIALS.md').read_text()
    assert not (tmp_path / 'RESULTS.md').exists()
    assert 'no results table' in result.stdout


def write_geometry(path) -> None:
    """A graph_token_geometry.json of two seeds per norm on ZINC-subset, as
    graph_token_analysis.py writes it."""
    from benchmarks.analysis.graph_token_summary import \
        summarize_geometry
    rows = [{'dataset': 'zinc_subset', 'norm': norm, 'seed': seed,
             'run': f'runs/zinc_subset/{norm}_seed{seed}', 'split': 'test',
             'num_graphs': 1000, 'uniformity': u, 'anisotropy': a}
            for norm, values in (('sep', ((-3.0, 0.1), (-2.8, 0.2))),
                                 ('share', ((-1.0, 0.5), (-1.4, 0.7))))
            for seed, (u, a) in enumerate(values)]
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({'split': 'test',
                                'plot': 'graph_token_geometry.png',
                                'runs': rows, **summarize_geometry(rows)}))


def test_geometry_table_sentences_and_plot_link(runs, tmp_path):
    """--geometry appends the graph-token geometry of
    graph_token_analysis.py; its plot is linked from the README and from
    RESULTS.md, each relative to itself."""
    geometry = tmp_path / 'graph_token' / 'graph_token_geometry.json'
    write_geometry(geometry)
    readme = tmp_path / 'README.md'
    readme.write_text(f'{README_BEGIN}\n{README_END}\n')
    output = tmp_path / 'out' / 'RESULTS.md'
    result = run_results_table(
        ['--runs',
         str(runs), '--output', str(output), '--figures',
         str(tmp_path / 'figs'), '--readme', str(readme), '--geometry',
         str(geometry)])
    assert result.returncode == 0, result.stderr
    for text in (readme.read_text(), output.read_text()):
        assert ('| zinc_subset | Graphormer + SepNorm | 2 | -2.900 ± 0.141 '
                '| 0.150 ± 0.071 |') in text
        assert ("SepNorm's graph-token embeddings are more uniform "
                "(uniformity -2.900 vs -1.200") in text
        assert text.index('**Time to accuracy**') < text.index(
            '**Graph-token geometry**')
    assert ('![graph_token_geometry](graph_token/graph_token_geometry.png)'
            in readme.read_text())
    assert ('![graph_token_geometry](../graph_token/'
            'graph_token_geometry.png)') in output.read_text()
    result = run_results_table(
        ['--runs',
         str(runs), '--output', str(output), '--geometry',
         str(tmp_path / 'none.json')])
    assert result.returncode == 2 and 'none.json' in result.stderr


def test_geometry_beside_the_runs_is_read_without_the_option(tmp_path):
    """A regeneration without --geometry keeps the geometry that lies beside
    the runs' folder (results/graph_token/ for results/runs/), so the
    committed section is not dropped; without one there is no section."""
    results = tmp_path / 'results'
    write_run(results / 'runs', 'a', 'zinc_subset', 'sep', 0, 0.14, 0.15)
    write_run(results / 'runs', 'b', 'zinc_subset', 'share', 0, 0.20, 0.21)
    output = results / 'RESULTS.md'
    argv = ['--runs', results / 'runs', '--output', output, '--figures',
            tmp_path / 'figs']
    assert run_results_table(argv).returncode == 0
    assert '**Graph-token geometry**' not in output.read_text()
    write_geometry(results / 'graph_token' / 'graph_token_geometry.json')
    assert run_results_table(argv).returncode == 0
    assert ('| zinc_subset | Graphormer + SepNorm | 2 | -2.900 ± 0.141 '
            '| 0.150 ± 0.071 |') in output.read_text()


def test_every_model_of_a_figure_has_its_own_colour():
    from benchmarks.analysis.result_plots import _colours
    from benchmarks.analysis.runs import Group
    models = ['sep', 'share'] + [f'sep, variant {i}' for i in range(14)]
    colours = _colours([Group('molhiv', m, 'rocauc') for m in models])
    assert colours['sep'] == 'tab:red' and colours['share'] == 'tab:blue'
    # Twelve colours of their own for the others, then round again.
    others = [colours[m] for m in models[2:]]
    assert len(set(others[:12])) == 12
    assert not {'tab:red', 'tab:blue'} & set(others)
