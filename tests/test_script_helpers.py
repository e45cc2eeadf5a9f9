"""The metrics.csv reading of tests/script_helpers.py, which the CUDA resume
test (tests/gpu/test_cuda_runs.py) compares runs with: its test_* cells are
empty until the test split is scored once at the end."""
import pytest
from script_helpers import assert_rows_close, metric_values, metrics_rows

CSV = ('epoch,step,train_loss,val_mae,test_mae\n'
       '0,4,1.5,0.9,\n'
       '1,8,1.25,0.75,0.8\n')


def rows(tmp_path, text=CSV):
    (tmp_path / 'metrics.csv').write_text(text)
    return metric_values(metrics_rows(tmp_path))


def test_empty_cells_read_as_none(tmp_path):
    first, last = rows(tmp_path)
    assert first == dict(epoch='0', step='4', train_loss=1.5, val_mae=0.9,
                         test_mae=None)
    assert last['test_mae'] == 0.8


def test_rows_compare_within_tolerance(tmp_path):
    expected = rows(tmp_path)
    close = rows(tmp_path, CSV.replace('1.25', '1.2500001'))
    assert_rows_close(expected, close, rel=1e-4, abs=1e-6)
    for changed in (CSV.replace('1.25', '1.3'),      # A number moved.
                    CSV.replace('0.9,\n', '0.9,0.7\n'),  # Empty vs number.
                    CSV.replace('1,8,', '1,9,')):      # Another step.
        with pytest.raises(AssertionError):
            assert_rows_close(expected, rows(tmp_path, changed), rel=1e-4,
                              abs=1e-6)
