"""Tests for graphormer_sepnorm.predict.shards: the K/N form and which rows
a shard owns (against a row-by-row count)."""
import pytest

from graphormer_sepnorm.predict import PredictionError, Shard


@pytest.mark.parametrize('text,expected', [('1/1', (1, 1)), ('3/8', (3, 8)),
                                           (' 2 / 3 ', (2, 3)),
                                           ((2, 5), (2, 5))])
def test_parse(text, expected):
    shard = Shard.parse(text)
    assert (shard.index, shard.count) == expected
    assert str(Shard.parse(str(shard))) == str(shard)


@pytest.mark.parametrize('text,message', [
    ('3/2', 'got 3/2'), ('0/0', 'got 0/0'), ('0/4', 'counted from 1'),
    ('a/b', "got 'a/b'"), ('1/0', 'got 1/0'), ('-1/3', "got '-1/3'"),
    ('2', "got '2'"), ('1/2/3', "got '1/2/3'"), ('', "got ''"),
])
def test_bad_forms(text, message):
    with pytest.raises(PredictionError) as exc:
        Shard.parse(text)
    assert message in str(exc.value) and 'K/N' in str(exc.value)
    assert '\n' not in str(exc.value)


@pytest.mark.parametrize('total', [0, 1, 9, 10, 11, 95, 100, 101])
def test_shards_partition_the_rows(total):
    chunk = 10
    for count in (1, 2, 3, 7):
        owners = []
        for row in range(total):
            owners.append([k for k in range(1, count + 1)
                           if Shard(k, count).owns(row // chunk)])
        assert all(len(o) == 1 for o in owners)  # Each row exactly once.
        for k in range(1, count + 1):
            assert Shard(k, count).owned_rows(total, chunk) == \
                sum(o == [k] for o in owners)
