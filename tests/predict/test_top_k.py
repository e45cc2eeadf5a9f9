"""Tests for graphormer_sepnorm.predict.top_k against sorting everything."""
import math
import random

import pytest

from graphormer_sepnorm.predict import PredictionError
from graphormer_sepnorm.predict.top_k import TopK, ranked_rows


def _reference(items, k, ascending):
    good = [(s, r) for r, s, _ in items if s is not None and not
            math.isnan(s)]
    good.sort(key=lambda t: (t[0] if ascending else -t[0], t[1]))
    return [str(r) for _, r in good[:k]]


@pytest.mark.parametrize('ascending', [False, True])
@pytest.mark.parametrize('k', [1, 5, 50, 500])
def test_equals_a_full_sort_with_ties_and_gaps(k, ascending):
    rng = random.Random(k)
    items = []
    for row in range(1, 301):
        score = rng.choice([None, math.nan, round(rng.gauss(0, 1), 1)])
        items.append((row, score, [str(row)]))
    order = list(items)
    rng.shuffle(order)  # Arrival order does not matter.
    top = TopK(k, ascending)
    top.extend(order)
    assert [f[0] for f in top.best()] == _reference(items, k, ascending)
    assert len(top) == min(k, len(_reference(items, 1000, ascending)))


def test_rows_seen_again_are_not_counted_twice():
    top = TopK(3)
    top.extend([(1, 0.5, ['1']), (2, 0.9, ['2']), (3, 0.1, ['3'])])
    top.extend([(2, 0.9, ['2']), (3, 0.1, ['3']), (4, 0.7, ['4'])])
    assert top.best() == [['2'], ['4'], ['1']]
    # A dropped row comes back as a candidate like any other.
    top.push(3, 0.1, ['3'])
    assert top.best() == [['2'], ['4'], ['1']]


def test_ranked_rows_reads_a_top_file():
    columns = ['row', 'smiles', 'prediction']
    rows = [['4', 'CCO', '0.25'], ['2', 'CCN', '-1.5']]
    assert list(ranked_rows(rows, columns, 'prediction')) == [
        (4, 0.25, rows[0]), (2, -1.5, rows[1])]


@pytest.mark.parametrize('k', [0, -3, 2.5])
def test_bad_k(k):
    with pytest.raises(PredictionError, match='--top must be a positive'):
        TopK(k)
