"""benchmarks/gpu_summary.py on the committed H200 run: the figures read
back by hand from its files, the README blocks it writes, and a one-line
error for a folder without them."""
import re

from benchmark_helpers import script_module

gpu_summary = script_module('gpu_summary')


def test_figures_of_the_committed_run():
    run = gpu_summary.RUN
    assert gpu_summary.machine(run) == {
        'gpu': 'NVIDIA H200', 'torch': '2.11.0+cu130',
        'reference': '4.57.6'}
    rows = gpu_summary.step_rows(run)
    # reference.md: 2 datasets' batch sizes (ZINC 128 and 256, MolHIV 128)
    # x fp32/bf16 x ShareNorm/SepNorm.
    assert len(rows) == 12
    assert {'dataset': 'ZINC', 'batch': 128, 'precision': 'fp32',
            'norm': 'SepNorm', 'ours': 43.7, 'reference': 42.7} in rows
    outcomes = gpu_summary.test_outcomes(run)
    assert sorted(outcomes.values()).count('PASSED') == 13
    assert [name for name, outcome in outcomes.items()
            if outcome == 'unfinished'] == [
        'tests/gpu/test_cuda_model.py::test_compiled_matches_eager_on_cuda']
    assert sum(o == 'FAILED' for o in outcomes.values()) == 4
    text, summary = gpu_summary.report(run)
    assert '| ZINC, 128 | fp32 | SepNorm | 43.7 | 23 | 42.7 | 1.0x |' in text
    assert '| MolHIV, 128 | fp32 | SepNorm | 35.0 | 29 | 169.6 | 4.8x |' \
        in text
    assert '759 steps in 90 s' in text and 'test MAE 0.575' in text
    # Beside the committed CPU runs (README's table: 0.416 ± 0.014, 4 seeds)
    # and the paper's 0.144.
    assert 'the CPU rows 0.416 ± 0.014 over 4 seeds' in text
    assert "the paper's full recipe on GPUs 0.144" in text
    assert '43.7 ms (23 steps/s; reference 42.7; goal 333 steps/s missed)' \
        in summary


def test_the_readme_blocks_are_the_scripts_output():
    text, summary = gpu_summary.report(gpu_summary.RUN)
    for path, block, expected in (('README.md', 'gpu-summary', summary),
                                  ('benchmarks/README.md', 'gpu-run', text)):
        readme = (gpu_summary.REPO / path).read_text()
        found = re.search(rf'<!-- {block}:begin [^>]*-->\n(.*?)<!-- '
                          rf'{block}:end -->', readme, re.S)
        assert found and found.group(1) == expected, (
            f'{path}: run python benchmarks/gpu_summary.py --readme')


def test_a_folder_without_the_files_is_a_one_line_error(tmp_path, capsys):
    assert gpu_summary.main(['--run', str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f'error: {tmp_path}') and 'env.txt' in error
    assert len(error.splitlines()) == 1
