"""benchmarks/training_speed/baseline.py: the options a baseline revision's
own script receives."""
from benchmarks.training_speed.baseline import without_option


def test_baseline_runs_get_the_options_they_know():
    argv = ['--datasets', 'zinc_subset', '--baseline', 'abc123', '--json',
            'x.json', '--precision', '32', 'bf16', '--steps', '5',
            'model.num_layers=2']
    assert without_option(argv, '--baseline', '--json', '--precision') == [
        '--datasets', 'zinc_subset', '--steps', '5', 'model.num_layers=2']
