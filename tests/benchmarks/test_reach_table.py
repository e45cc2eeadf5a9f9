"""benchmarks/reach_table.py: REACH.md from a folder of run directories,
and one-line errors for a missing folder or probe."""
import json

from benchmark_helpers import script_main


def _write_run(folder, benchmark, seed, test, init_from=None):
    folder.mkdir(parents=True)
    (folder / 'results.json').write_text(json.dumps({
        'benchmark': benchmark, 'dataset': 'csv', 'seed': seed,
        'metric': 'rocauc', 'test_metric_at_best_val': test,
        'best_val_metric': 0.7, 'cpu_time_s': 120.0, 'init_from': init_from,
        'hardware': {'device_name': 'CPU Y'}}))


def test_writes_reach_md_from_the_runs(tmp_path, capsys):
    runs = tmp_path / 'reach'
    for seed, (scratch, tuned) in enumerate(((.6, .7), (.62, .71))):
        _write_run(runs / 'x' / f'sep_seed{seed}', 'x', seed, scratch)
        _write_run(runs / 'x_pretrained' / f'sep_seed{seed}', 'x', seed,
                   tuned, init_from={'source': 'bundled:pretrained-sepnorm'})
    probe = tmp_path / 'probe.json'
    probe.write_text(json.dumps({'sets': {'x': [{'test_rocauc': .55}]}}))
    main = script_main('reach_table')
    assert main(['--runs', str(runs), '--probe', str(probe)]) == 0
    written = (runs / 'REACH.md').read_text()
    row = next(line for line in written.splitlines()
               if line.startswith('| x '))
    assert '| 55.00 |' in row and '61.00 ± 1.41' in row
    assert '70.50 ± 0.71' in row and '+9.50 [' in row
    assert 'Fine-tuned − scratch' in capsys.readouterr().out


def test_missing_inputs_are_one_line_errors(tmp_path, capsys):
    main = script_main('reach_table')
    assert main(['--runs', str(tmp_path / 'none')]) == 2
    err = capsys.readouterr().err
    assert err.startswith('error: No run directory') and err.count('\n') == 1
    _write_run(tmp_path / 'r' / 'a', 'x', 0, .5)
    assert main(['--runs', str(tmp_path / 'r'), '--probe',
                 str(tmp_path / 'no.json')]) == 2
    assert 'no.json' in capsys.readouterr().err
