"""benchmarks/analysis/budget.py: issue 45's same budget measured side by
side. Medians and ratios by hand, pairs written and read back, pairs of
a row the goal no longer reads left out."""
import json

import pytest

from benchmarks.analysis.budget import (Pair, SideBySide, budget_lines,
                                        budget_markdown, load_pairs,
                                        side_by_side)


def _side(method, cpu_s, val=0.8, test=0.7, committed_val=None,
          committed_test=None):
    return {'method': method, 'committed_run': f'runs/{method}',
            'plan': 'plan.yaml', 'trial': 't', 'cpu_s': cpu_s,
            'wall_s': cpu_s + 1, 'reported_cpu_time_s': cpu_s - 5,
            'committed_cpu_time_s': cpu_s * 2, 'best_val_metric': val,
            'committed_best_val_metric': val if committed_val is None
            else committed_val, 'test_metric': test,
            'committed_test_metric': test if committed_test is None
            else committed_test}


def _pair(set_key, seed, ours_s, theirs_s, method='ours', **ours):
    return Pair(set=set_key, seed=seed, processor='CPU Z', threads=1,
                commit='abc1234', date='2026-12-08',
                ours=_side(method, ours_s, **ours),
                reference=_side('chemprop', theirs_s))


def test_ratio_of_medians_by_hand():
    # Ours 300, 360, 600 s: median 6 min; chemprop 240, 300, 120 s:
    # median 4 min; 6 / 4 = 1.5 (the per-pair ratios' median would be 1.25).
    pairs = [_pair('clintox', 0, 300, 240), _pair('clintox', 1, 360, 300),
             _pair('clintox', 2, 600, 120)]
    measured = side_by_side(pairs)['clintox']
    assert measured.seeds == [0, 1, 2]
    assert measured.minutes('ours') == pytest.approx(6.0)
    assert measured.minutes('reference') == pytest.approx(4.0)
    assert measured.ratio == pytest.approx(1.5)
    assert pairs[0].ratio == pytest.approx(1.25)


def test_reproduced_compares_both_metrics_with_the_committed_run():
    assert _pair('sider', 0, 1, 1).reproduced('ours')
    assert not _pair('sider', 0, 1, 1, committed_val=0.81).reproduced('ours')
    assert not _pair('sider', 0, 1, 1,
                     committed_test=0.6999).reproduced('ours')
    # Within the float32 round trip: the same.
    assert _pair('sider', 0, 1, 1,
                 committed_test=0.7 + 1e-8).reproduced('ours')


def test_pairs_written_and_read_back(tmp_path):
    written = [_pair('tox21', 1, 200, 100), _pair('clintox', 0, 300, 240)]
    for pair in written:
        (tmp_path / f'{pair.set}_seed{pair.seed}.json').write_text(
            json.dumps(pair.to_json()))
    read = load_pairs(tmp_path)
    assert [(p.set, p.seed) for p in read] == [('clintox', 0), ('tox21', 1)]
    assert read[1] == written[0]
    assert load_pairs(tmp_path / 'missing') == []


def test_pairs_of_a_row_the_goal_no_longer_reads_are_left_out():
    pairs = [_pair('clintox', 0, 300, 240, method='old row'),
             _pair('clintox', 1, 360, 300, method='new row'),
             _pair('tox21', 0, 60, 120, method='tox row')]
    with pytest.raises(ValueError, match='clintox: pairs of two rows'):
        side_by_side(pairs)
    measured = side_by_side(pairs, {'clintox': ('new row', 'chemprop'),
                                    'tox21': ('another', 'chemprop')})
    assert list(measured) == ['clintox']
    assert measured['clintox'].seeds == [1]
    assert measured['clintox'].ratio == pytest.approx(360 / 300)


def test_lines_and_table_name_the_numbers():
    pairs = [_pair('clintox', 0, 300, 240),
             _pair('clintox', 1, 360, 300, committed_test=0.5)]
    line, = budget_lines(pairs)
    # Medians 5.5 and 4.5 min: 1.22x; seed 1's replay did not reproduce.
    assert line == ('clintox: ours 5.5 CPU min against chemprop 4.5 '
                    '(medians of seeds 0, 1, side by side on CPU Z): 1.22x; '
                    'replays that reproduced their committed runs: ours 1 '
                    'of 2, chemprop 2 of 2')
    table = budget_markdown(side_by_side(pairs), {'clintox': 'ClinTox'})
    assert table.splitlines()[2] == ('| ClinTox | ours | 0, 1 | 5.5 | 4.5 | '
                                     '1.22× | CPU Z | 1 of 2, 2 of 2 |')
    assert 'No set measured' in budget_markdown({}, {})


def test_side_by_side_needs_a_pair():
    with pytest.raises(Exception):
        SideBySide('clintox', 'ours', 'chemprop', []).ratio
