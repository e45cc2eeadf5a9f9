"""Tests for graphormer_sepnorm.predict.merge and
scripts/merge_predictions.py: shards merged equal the unsharded output byte
for byte, and parts that do not make one complete run are refused."""
import json
from pathlib import Path

import pytest

from graphormer_sepnorm.predict import PredictionError, merge_predictions
from graphormer_sepnorm.predict.run_record import read_record, record_path

from predict_helpers import (MERGE, PREDICT, one_thread,  # noqa: F401
                             run_script, zinc, zinc_ckpt, zinc_smiles)


@pytest.fixture
def library(zinc_smiles, tmp_path) -> Path:
    path = tmp_path / 'library.smi'
    rows = [f'{s} ZINC{i}' for i, s in enumerate(zinc_smiles[:250])]
    rows[40] = 'C1CC broken'
    path.write_text('\n'.join(rows) + '\n')
    return path


@pytest.mark.parametrize('suffix', ['.csv.gz'])
def test_three_shards_merged_equal_the_unsharded_output(
        suffix, zinc_ckpt, library, tmp_path):
    """The command lines, as a job array runs them (gzipped: the harder
    case of byte equality; plain CSV is tested through the API below)."""
    common = ['--checkpoint', str(zinc_ckpt), '--input', str(library),
              '--chunk-size', '32', '--batch-size', '16', '--quiet']
    whole = tmp_path / f'whole{suffix}'
    assert run_script(PREDICT, *common, '--output',
                      str(whole)).returncode == 0
    parts = []
    for k in (3, 1, 2):  # Any order, as a job array finishes.
        part = tmp_path / f'part{k}{suffix}'
        result = run_script(PREDICT, *common, '--shard', f'{k}/3',
                            '--num-workers', '0', '--output', str(part))
        assert result.returncode == 0, result.stderr
        parts.append(str(part))
    rows = [read_record(p).output_rows for p in sorted(parts)]
    assert rows == [96, 90, 64]  # Chunks 0,3,6 / 1,4,7 / 2,5 of 32 rows.
    merged = tmp_path / f'merged{suffix}'
    result = run_script(MERGE, *parts, '--output', str(merged), '--quiet')
    assert result.returncode == 0, result.stderr
    assert 'Merged 3 shards' in result.stderr
    assert merged.read_bytes() == whole.read_bytes()
    merged_record = json.loads(record_path(merged).read_text())
    whole_record = json.loads(record_path(whole).read_text())
    assert merged_record == whole_record


def test_top_k_shards_merged_equal_the_unsharded_top_k(zinc, library,
                                                       tmp_path):
    options = dict(chunk_size=20, num_workers=0, top=12, by='prediction',
                   progress=False)
    whole = tmp_path / 'top.csv'
    zinc.predict_file(library, whole, **options)
    parts = [tmp_path / f'top{k}.csv' for k in (1, 2)]
    for k, part in enumerate(parts, start=1):
        zinc.predict_file(library, part, shard=f'{k}/2', **options)
    assert merge_predictions(parts, tmp_path / 'merged.csv',
                             progress=False) == 12
    assert (tmp_path / 'merged.csv').read_bytes() == whole.read_bytes()


@pytest.fixture
def shards(zinc, library, tmp_path) -> list[Path]:
    parts = [tmp_path / f'p{k}.csv' for k in (1, 2, 3)]
    for k, part in enumerate(parts, start=1):
        zinc.predict_file(library, part, chunk_size=32, num_workers=0,
                          shard=f'{k}/3', progress=False)
    return parts


def _refused(parts, message, output=None):
    output = output or Path(parts[0]).with_name('merged.csv')
    with pytest.raises(PredictionError, match=message) as exc:
        merge_predictions(parts, output, progress=False)
    assert '\n' not in str(exc.value)
    assert Path(output) in map(Path, parts) or not Path(output).exists()


def test_missing_repeated_and_foreign_parts_are_refused(shards, zinc,
                                                        library, tmp_path):
    _refused(shards[:2], r'Shard\(s\) 3/3 missing')
    _refused([shards[0], shards[0], shards[1]], 'given twice')
    other = tmp_path / 'other.csv'
    zinc.predict_file(library, other, chunk_size=32, batch_size=64,
                      num_workers=0, shard='3/3', progress=False)
    _refused(shards[:2] + [other], r'come from different runs; what '
             r'differs: --batch-size')
    whole = tmp_path / 'whole.csv'
    zinc.predict_file(library, whole, chunk_size=32, num_workers=0,
                      progress=False)
    _refused([whole], 'not the output of a shard')
    _refused(shards, 'is one of the parts', output=shards[0])
    _refused(shards, 'Cannot write the output', output='/proc/merged.csv')
    # Parts that do not exist are named as such, not as parts without a
    # record (issue 33).
    _refused([tmp_path / 'a.csv', shards[0], tmp_path / 'b.csv'],
             f"^{tmp_path / 'a.csv'}, {tmp_path / 'b.csv'}: no such file; "
             f"pass the output file that each shard's predict --shard i/N "
             f"wrote")


def test_unfinished_or_damaged_parts_are_refused(shards):
    record = json.loads(record_path(shards[1]).read_text())
    record['complete'] = False
    record_path(shards[1]).write_text(json.dumps(record))
    _refused(shards, r'p2.csv is not finished .* --resume')
    record['complete'] = True
    record_path(shards[1]).write_text(json.dumps(record))
    lines = shards[1].read_text().splitlines(keepends=True)
    shards[1].write_text(''.join(lines[:-5]))  # Rows lost after the run.
    _refused(shards, 'p2.csv ends early')
    record_path(shards[2]).unlink()
    _refused(shards, 'p3.csv has no record of the run')


def test_merge_cli_errors_are_one_line(shards, tmp_path):
    result = run_script(MERGE, str(shards[0]), '--output',
                        str(tmp_path / 'm.csv'))
    assert result.returncode == 2
    assert result.stderr.startswith('error: Shard(s) 2/3, 3/3 missing')
    assert result.stderr.count('\n') == 1


def test_shards_merged_equal_the_unsharded_output_plain_csv(
        zinc, library, shards, tmp_path):
    whole = tmp_path / 'whole.csv'
    zinc.predict_file(library, whole, chunk_size=32, num_workers=0,
                      progress=False)
    assert merge_predictions(shards[::-1], tmp_path / 'merged.csv',
                             progress=False) == 250
    assert (tmp_path / 'merged.csv').read_bytes() == whole.read_bytes()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith('.')] \
        == []
