"""benchmarks/training_speed/report.py: the report of a comparison puts the
baseline's median and the ratio beside each setting, under the command as
given (less --json)."""
from benchmarks.training_speed.report import report_markdown


def test_the_report_puts_the_baseline_beside_each_setting():
    rows = [dict(dataset='zinc_subset', device='cpu', batch_size=256,
                 buckets=4, precision='32-true', compiled=False, median_step_s=0.5,
                 baseline='abc123', baseline_median_step_s=0.75,
                 speedup_vs_baseline=1.5, device_name='AMD EPYC (2 cores)')]
    text = report_markdown(
        rows, ['--baseline', 'abc123', '--json', 'x.json', '--steps', '5'])
    assert '`python benchmarks/train_throughput.py --baseline abc123 ' \
        '--steps 5`' in text
    assert '| zinc_subset | cpu | 256 | 4 | 32-true | no | — | 0.500 | 512 | ' \
        '0.750 | 1.50x |' in text
