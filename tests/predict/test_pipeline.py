"""Tests for graphormer_sepnorm.predict.pipeline (predict_file): streamed
output equal to predict(), SDF input, resume (refusals included, and a real
SIGKILL at several moments), top-K, empty inputs and multi-output models."""
import csv
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphormer_sepnorm.checkpoint import ModelCard, save_model
from graphormer_sepnorm.predict import (PredictFileOptions, PredictionError,
                                        Predictor, predict_file)
from graphormer_sepnorm.predict import file_run as file_run_module
from graphormer_sepnorm.predict import pipeline as pipeline_module
from graphormer_sepnorm.predict.run_record import read_record, record_path
from graphormer_sepnorm.predict.writers import CsvWriter

from predict_helpers import (PREDICT, one_thread, read_csv,  # noqa: F401
                             save_zinc_model, small_model, write_csv, zinc,
                             zinc_ckpt, zinc_smiles)
from test_readers import GARBAGE_RECORD, sdf_text


@pytest.fixture
def library(zinc_smiles, tmp_path) -> Path:
    """A CSV of 300 real ZINC molecules with ids and three bad rows."""
    smiles = list(zinc_smiles)
    for position, bad in ((7, 'not a smiles'), (150, ''), (299, 'CC[Se]C')):
        smiles[position] = bad
    return write_csv(tmp_path / 'library.csv', ['id', 'smiles'],
                     [[f'Z{i}', s] for i, s in enumerate(smiles)])


def _smiles_of(path: Path) -> list[str]:
    return [row['smiles'] for row in read_csv(path)]


# Output ######################################################################


def test_output_equals_predict_in_input_order(zinc, library, tmp_path):
    out = tmp_path / 'out' / 'pred.csv'  # The folder is created.
    summary = zinc.predict_file(library, out, batch_size=16, chunk_size=64,
                                num_workers=0, progress=False)
    rows = read_csv(out)
    assert list(rows[0]) == ['id', 'smiles', 'prediction', 'error']
    assert [r['id'] for r in rows] == [f'Z{i}' for i in range(300)]
    expected = zinc.predict(_smiles_of(library), batch_size=16,
                            chunk_size=64, num_workers=0)
    # Same chunks and batches: the same floats, written exactly.
    assert [r['prediction'] for r in rows] == [
        repr(p.value) if p.ok else '' for p in expected]
    assert [r['error'] for r in rows] == [p.error or '' for p in expected]
    assert [bool(r['error']) for r in rows].count(True) == 3
    assert (summary.rows, summary.predicted, summary.failed) == (300, 297, 3)
    record = read_record(out)
    assert record.complete and record.input_rows == record.output_rows == 300
    assert record.model_fingerprint == zinc.fingerprint


def test_predict_file_takes_the_options_the_method_takes_as_keywords(
        zinc, library, tmp_path):
    options = dict(batch_size=16, chunk_size=64, num_workers=0, top=5,
                   by='prediction', ascending=True, progress=False)
    zinc.predict_file(library, tmp_path / 'keywords.csv', **options)
    summary = predict_file(zinc, library, tmp_path / 'options.csv',
                           PredictFileOptions(**options))
    assert summary.top == 5
    assert (tmp_path / 'options.csv').read_bytes() == \
        (tmp_path / 'keywords.csv').read_bytes()
    with pytest.raises(TypeError, match='no_such_option'):
        zinc.predict_file(library, tmp_path / 'x.csv', no_such_option=1)


def test_output_is_written_chunk_by_chunk(zinc, library, tmp_path,
                                          monkeypatch):
    """The first chunk is written before the input has been read further
    than the chunks in flight: memory does not grow with the input."""
    read_at_write = []
    real_write = CsvWriter.write_rows
    real_rows = pipeline_module.MoleculeReader.rows
    consumed = [0]

    def counting_rows(self):
        for row in real_rows(self):
            consumed[0] += 1
            yield row

    def recording_write(self, rows):
        read_at_write.append(consumed[0])
        real_write(self, rows)

    monkeypatch.setattr(pipeline_module.MoleculeReader, 'rows',
                        counting_rows)
    monkeypatch.setattr(CsvWriter, 'write_rows', recording_write)
    zinc.predict_file(library, tmp_path / 'out.csv', chunk_size=20,
                      num_workers=0, progress=False)
    # Header, then 15 chunks, each written when at most two more chunks
    # (the look-ahead that decides on workers) had been read.
    assert len(read_at_write) == 16
    assert read_at_write[1] <= 3 * 20
    assert all(b - a <= 20 for a, b in zip(read_at_write[1:],
                                            read_at_write[2:]))


def test_sdf_input(zinc, zinc_smiles, tmp_path):
    smiles = zinc_smiles[:6]
    text = (sdf_text(smiles[:3], ['A', 'B', 'C']) + GARBAGE_RECORD +
            sdf_text(smiles[3:], ['D', 'E', 'F']))
    path = tmp_path / 'lib.sdf'
    path.write_text(text)
    out = tmp_path / 'out.csv.gz'
    summary = zinc.predict_file(path, out, num_workers=0, progress=False)
    rows = read_csv(out)
    assert [r['name'] for r in rows] == ['A', 'B', 'C', 'broken', 'D', 'E',
                                         'F']
    assert 'could not be read by RDKit' in rows[3]['error']
    assert rows[3]['smiles'] == rows[3]['prediction'] == ''
    good = rows[:3] + rows[4:]
    rdkit_smiles = [r['smiles'] for r in good]
    expected = zinc.predict(rdkit_smiles, num_workers=0)
    assert [float(r['prediction']) for r in good] == pytest.approx(
        [p.value for p in expected], abs=1e-6)
    assert (summary.predicted, summary.failed) == (6, 1)


def test_multi_output_model_gets_one_column_per_output(zinc_smiles,
                                                       tmp_path):
    model = small_model(3, max_nodes=40, out_channels=2)
    ckpt = tmp_path / 'two.safetensors'
    save_model(ckpt, model, ModelCard({}, 'zinc', 'regression', 0.5, 2.0))
    predictor = Predictor.from_checkpoint(ckpt)
    assert predictor.prediction_columns == ['prediction_1', 'prediction_2']
    path = tmp_path / 'lib.smi'
    path.write_text('\n'.join(zinc_smiles[:20] + ['bad']) + '\n')
    out = tmp_path / 'out.csv'
    predictor.predict_file(path, out, num_workers=0, progress=False)
    rows = read_csv(out)
    assert list(rows[0]) == ['smiles', 'name', 'prediction_1',
                             'prediction_2', 'error']
    values = predictor.predict(zinc_smiles[:20], num_workers=0)
    assert [(float(r['prediction_1']), float(r['prediction_2']))
            for r in rows[:20]] == [p.value for p in values]
    top = tmp_path / 'top.csv'
    predictor.predict_file(path, top, top=3, by='prediction_2',
                           num_workers=0, progress=False)
    best = sorted(values, key=lambda p: -p.value[1])[:3]
    assert [float(r['prediction_2']) for r in read_csv(top)] == [
        p.value[1] for p in best]


@pytest.mark.parametrize('name,text', [('empty.csv', 'smiles,id\n'),
                                       ('blank.smi', '\n\n  \n'),
                                       ('nothing.sdf', '')])
def test_empty_input(zinc, name, text, tmp_path):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(PredictionError, match='holds no molecules'):
        zinc.predict_file(path, tmp_path / 'out.csv', progress=False)
    assert not (tmp_path / 'out.csv').exists()
    assert not record_path(tmp_path / 'out.csv').exists()


# Resume ######################################################################


def _reference(zinc, library, tmp_path, **options) -> bytes:
    out = tmp_path / 'reference.csv'
    zinc.predict_file(library, out, chunk_size=64, num_workers=0,
                      progress=False, **options)
    return out.read_bytes()


def _as_killed(out: Path) -> None:
    """Rewrites the record of :obj:`out` as a run of a full output killed
    before it finished leaves it: written once at the start, nothing
    counted."""
    record = read_record(out)
    record.complete, record.rows_done = False, 0
    record.input_rows = record.output_rows = None
    pipeline_module.write_record(out, record)


def test_resume_keeps_complete_rows_and_drops_a_torn_one(zinc, library,
                                                         tmp_path):
    reference = _reference(zinc, library, tmp_path)
    out = tmp_path / 'out.csv'
    zinc.predict_file(library, out, chunk_size=64, num_workers=0,
                      progress=False)
    # An interrupted run: 100 complete rows (mid-chunk) and half a row.
    lines = reference.split(b'\n')
    torn = b'\n'.join(lines[:101]) + b'\n' + lines[101][:10]
    out.write_bytes(torn)
    _as_killed(out)
    summary = zinc.predict_file(library, out, chunk_size=64, num_workers=0,
                                progress=False, resume=True)
    assert out.read_bytes() == reference
    assert summary.kept == 100 and summary.rows == 300
    # Rows 101-128 were predicted again (the whole chunk, for identical
    # batches) but only rows from 101 on were written.
    assert summary.predicted + summary.failed == 200
    again = zinc.predict_file(library, out, chunk_size=64, resume=True,
                              progress=False)
    assert again.already_complete and out.read_bytes() == reference


def test_resume_of_every_row_killed_before_the_record(zinc, library,
                                                      tmp_path):
    """Killed after writing its last row but before completing its record:
    resuming predicts nothing and completes the record with the right
    counts (it said 0 rows: the counts came from the rows written by this
    call only)."""
    reference = _reference(zinc, library, tmp_path)
    complete = read_record(tmp_path / 'reference.csv')
    out = tmp_path / 'out.csv'
    out.write_bytes(reference)
    pipeline_module.write_record(out, complete)
    _as_killed(out)
    summary = zinc.predict_file(library, out, chunk_size=64, num_workers=0,
                                progress=False, resume=True)
    assert (summary.kept, summary.rows, summary.predicted) == (300, 300, 0)
    assert out.read_bytes() == reference
    assert read_record(out) == complete
    again = zinc.predict_file(library, out, chunk_size=64, resume=True,
                              progress=False)
    assert again.already_complete and again.rows == 300


def test_resume_without_a_file_starts_anew(zinc, library, tmp_path):
    reference = _reference(zinc, library, tmp_path)
    out = tmp_path / 'fresh.csv'
    summary = zinc.predict_file(library, out, chunk_size=64, num_workers=0,
                                resume=True, progress=False)
    assert out.read_bytes() == reference and summary.kept == 0


def test_resume_refuses_another_run(zinc, zinc_ckpt, library, tmp_path):
    out = tmp_path / 'out.csv'
    zinc.predict_file(library, out, chunk_size=64, num_workers=0,
                      progress=False)
    record = read_record(out)
    record.complete = False
    pipeline_module.write_record(out, record)
    original = out.read_bytes()

    def refused(predictor, path, match, **options):
        with pytest.raises(PredictionError, match=match) as exc:
            predictor.predict_file(path, out, chunk_size=options.pop(
                'chunk_size', 64), resume=True, progress=False, **options)
        assert '\n' not in str(exc.value)
        assert out.read_bytes() == original  # Nothing lost.

    edited = tmp_path / 'edited.csv'
    edited.write_bytes(library.read_bytes().replace(b'Z1,', b'Z1b,'))
    refused(zinc, edited, r'Cannot resume .* what differs: the input')
    other = Predictor.from_checkpoint(
        save_zinc_model(tmp_path / 'other.safetensors', seed=5))
    refused(other, library, 'what differs: the model')
    refused(zinc, library, r"--batch-size \(64 here, 128 there\)",
            batch_size=64)
    refused(zinc, library, r"--chunk-size \(32 here, 64 there\)",
            chunk_size=32)
    refused(zinc, library, r"--shard \('1/2' here, not set there\)",
            shard='1/2')
    refused(zinc, library, r"--top \(5 here, not set there\)", top=5,
            by='prediction')
    record_path(out).unlink()
    refused(zinc, library, 'no record of the run that wrote it')
    with pytest.raises(PredictionError, match='standard input'):
        zinc.predict_file('-', out, resume=True, progress=False)
    with pytest.raises(PredictionError, match='needs an output file'):
        zinc.predict_file(library, '-', resume=True, progress=False)


def _children(pid: int) -> list[int]:
    path = Path(f'/proc/{pid}/task/{pid}/children')
    return [int(c) for c in path.read_text().split()] if path.exists() \
        else []


def _alive(pid: int) -> bool:
    try:
        status = Path(f'/proc/{pid}/status').read_text()
    except OSError:
        return False
    return '\nState:\tZ' not in status


@pytest.mark.parametrize('mode', ['full', 'top'])
def test_sigkill_then_resume_equals_an_uninterrupted_run(
        mode, zinc_ckpt, zinc_smiles, tmp_path):
    """Kills scripts/predict.py with SIGKILL at several moments (the whole
    process group, as a scheduler does, and the main process alone, whose
    workers must then exit), resumes each time, and compares with an
    uninterrupted run."""
    source = tmp_path / 'lib.smi'
    source.write_text(''.join(f'{s} Z{i}\n'
                              for i, s in enumerate(zinc_smiles * 2)))
    args = [sys.executable, str(PREDICT), '--checkpoint', str(zinc_ckpt),
            '--input', str(source), '--chunk-size', '25', '--batch-size',
            '8', '--num-workers', '2', '--quiet']
    if mode == 'top':
        args += ['--top', '40', '--by', 'prediction']
    env = {**os.environ, 'OMP_NUM_THREADS': '1'}
    reference = tmp_path / 'reference.csv'
    subprocess.run(args + ['--output', str(reference)], env=env, check=True,
                   timeout=300)
    out = tmp_path / 'out.csv'
    kills = 0
    # Kill when the output reaches these fractions of its final size (the
    # first as soon as the run has started).
    final = reference.stat().st_size
    for fraction, whole_group in ((0.0, True), (0.3, False), (0.7, True)):
        process = subprocess.Popen(args + ['--output', str(out), '--resume'],
                                   env=env, start_new_session=True)
        deadline = time.monotonic() + 240
        while process.poll() is None and time.monotonic() < deadline:
            size = out.stat().st_size if out.exists() else 0
            if size >= fraction * final and (fraction or size):
                break
            time.sleep(0.02)
        if process.poll() is not None:
            continue  # Finished before the kill point (a fast machine).
        workers = _children(process.pid)
        if whole_group:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            os.kill(process.pid, signal.SIGKILL)
        process.wait()
        kills += 1
        for _ in range(200):  # Orphaned workers notice and exit.
            if not any(_alive(w) for w in workers):
                break
            time.sleep(0.05)
        assert not any(_alive(w) for w in workers)
    assert kills >= 1
    subprocess.run(args + ['--output', str(out), '--resume'], env=env,
                   check=True, timeout=300)
    assert out.read_bytes() == reference.read_bytes()
    assert read_record(out) == read_record(reference)  # Counts too.


# Top-K #######################################################################


def _ranked(rows: list[dict], ascending: bool) -> list[dict]:
    """The reference ranking: sort the full output by hand."""
    good = [(float(r['prediction']), k, r) for k, r in enumerate(rows)
            if r['prediction']]
    good.sort(key=lambda t: (t[0] if ascending else -t[0], t[1]))
    return [dict(r, row=str(k + 1)) for _, k, r in good]


@pytest.mark.parametrize('k,ascending', [(10, False), (10, True),
                                         (1000, False)])
def test_top_k_equals_sorting_the_full_output(zinc, library, tmp_path, k,
                                              ascending):
    full = tmp_path / 'full.csv'
    zinc.predict_file(library, full, chunk_size=64, num_workers=0,
                      progress=False)
    top = tmp_path / 'top.csv'
    summary = zinc.predict_file(library, top, chunk_size=64, num_workers=0,
                                top=k, by='prediction', ascending=ascending,
                                progress=False)
    rows = read_csv(top)
    assert list(rows[0]) == ['row', 'id', 'smiles', 'prediction']
    expected = _ranked(read_csv(full), ascending)[:k]
    assert [dict(r) for r in rows] == [
        {key: r[key] for key in ('row', 'id', 'smiles', 'prediction')}
        for r in expected]
    assert len(rows) == min(k, 297) and summary.failed == 3


def test_top_k_ties_break_by_input_order(zinc, zinc_smiles, tmp_path):
    path = tmp_path / 'dups.smi'
    path.write_text(''.join(f'{zinc_smiles[i % 3]} n{i}\n'
                            for i in range(30)))
    out = tmp_path / 'top.csv'
    zinc.predict_file(path, out, top=4, by='prediction', chunk_size=7,
                      num_workers=0, progress=False)
    rows = read_csv(out)
    best = max(range(3), key=lambda i: zinc.predict(
        [zinc_smiles[i]])[0].value)
    # The top 4 are copies of the best molecule. Copies predicted in
    # different batches can differ in the last float32 bits (batch shapes
    # change the summation order), so only exact ties are ordered by row.
    names = [r['name'] for r in rows]
    assert all(int(name[1:]) % 3 == best for name in names)
    values = [float(r['prediction']) for r in rows]
    assert values == sorted(values, reverse=True)
    for a, b in zip(rows, rows[1:]):
        if a['prediction'] == b['prediction']:
            assert int(a['name'][1:]) < int(b['name'][1:])


def test_top_k_resume_after_an_interruption(zinc, library, tmp_path,
                                            monkeypatch):
    reference = tmp_path / 'reference.csv'
    zinc.predict_file(library, reference, chunk_size=32, num_workers=0,
                      top=15, by='prediction', progress=False)
    real_stream = file_run_module.stream_chunks

    def interrupted(*args, **kwargs):
        for count, item in enumerate(real_stream(*args, **kwargs)):
            if count == 5:
                raise KeyboardInterrupt
            yield item

    out = tmp_path / 'top.csv'
    monkeypatch.setattr(file_run_module, 'stream_chunks', interrupted)
    with pytest.raises(KeyboardInterrupt):
        zinc.predict_file(library, out, chunk_size=32, num_workers=0,
                          top=15, by='prediction', progress=False)
    done = read_record(out).rows_done  # Saved after every chunk, or most.
    assert done % 32 == 0 and done <= 5 * 32
    monkeypatch.setattr(file_run_module, 'stream_chunks', real_stream)
    summary = zinc.predict_file(library, out, chunk_size=32, num_workers=0,
                                top=15, by='prediction', progress=False,
                                resume=True)
    assert summary.kept == done
    assert out.read_bytes() == reference.read_bytes()


@pytest.mark.parametrize('options,message', [
    ({'top': 5}, '--top needs --by COLUMN'),
    ({'top': 5, 'by': 'logp'}, "--by 'logp' is not a prediction column of "
     "this model; choose one of: prediction"),
    ({'by': 'prediction'}, 'add --top K'),
    ({'top': 0, 'by': 'prediction'}, '--top must be a positive'),
    ({'shard': '3/2'}, 'shard must be K/N'),
])
def test_bad_options_fail_before_any_work(zinc, library, tmp_path, options,
                                          message):
    out = tmp_path / 'out.csv'
    with pytest.raises(PredictionError, match=message):
        zinc.predict_file(library, out, progress=False, **options)
    assert not out.exists()


def test_progress_bar_on_stderr(zinc, library, tmp_path, capsys):
    zinc.predict_file(library, tmp_path / 'out.csv', chunk_size=100,
                      num_workers=0, progress=True)
    err = capsys.readouterr().err
    assert 'Predicting' in err and '300/300' in err.replace('\r', '\n')
    zinc.predict_file(library, tmp_path / 'out.csv', chunk_size=100,
                      num_workers=0, progress=False)
    assert capsys.readouterr().err == ''


def test_rate_of_the_summary(zinc, library, tmp_path):
    summary = zinc.predict_file(library, tmp_path / 'o.csv', chunk_size=100,
                                num_workers=0, progress=False)
    assert summary.seconds > 0 and math.isfinite(summary.seconds)
    assert csv  # The module reads the outputs with the csv module.
