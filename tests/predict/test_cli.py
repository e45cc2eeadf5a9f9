"""Tests for graphormer_sepnorm.cli.predict (scripts/predict.py): outputs,
standard input and output, and every bad input of issues 12 and 14 (exit
status 2, one ``error:`` line, nothing lost, before any work)."""
import csv
import gzip
import io
import json

import pytest
import torch
from safetensors.torch import save_file

from graphormer_sepnorm.bundled import BUNDLED_MODELS, ENV_VAR
from graphormer_sepnorm.cli import predict as cli
from graphormer_sepnorm.predict import Predictor
from graphormer_sepnorm.predict import pipeline as pipeline_module
from graphormer_sepnorm.predict import predictor as predictor_module
from graphormer_sepnorm.predict.run_record import record_path

from predict_helpers import (PREDICT, one_thread, read_csv,  # noqa: F401
                             run_script, save_zinc_model, write_csv, zinc,
                             zinc_ckpt, zinc_members, zinc_smiles)
from test_readers import GARBAGE_RECORD, sdf_text


def _fails(args, capsys, expected: str) -> str:
    assert cli.predict_main([str(a) for a in args]) == 2
    err = capsys.readouterr().err
    assert err.startswith('error: ') and err.count('\n') == 1, err
    assert 'Traceback' not in err
    assert expected in err, err
    return err


# Outputs #####################################################################


def test_smiles_table(zinc_ckpt, zinc, capsys):
    assert cli.predict_main(['--checkpoint', str(zinc_ckpt), '--smiles', 'CCO',
                     'c1ccccc1O', 'C1CC']) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ['smiles', 'prediction', 'error']
    assert lines[1].startswith('CCO ')
    value = float(lines[1].split()[1])
    assert value == pytest.approx(zinc.predict(['CCO'])[0].value, rel=1e-5)
    assert lines[3].startswith('C1CC') and 'could not be parsed' in lines[3]


def test_csv_round_trip_with_excel_quirks(zinc_ckpt, zinc_smiles, tmp_path,
                                          capsys):
    """A UTF-8 CSV with a byte-order mark, CRLF line ends and quoted commas
    (issue 12, item 4): every row comes back, in order, with its columns."""
    smiles = zinc_smiles[:5] + ['', 'CC[Si](C)C']
    src = tmp_path / 'in.csv'
    with open(src, 'w', newline='', encoding='utf-8-sig') as f:
        writer = csv.writer(f, lineterminator='\r\n')
        writer.writerow(['name', 'smi'])
        writer.writerows([[f'm{i}, batch "7"', s]
                          for i, s in enumerate(smiles)])
    out = tmp_path / 'new' / 'pred.csv'
    assert cli.predict_main(['--checkpoint', str(zinc_ckpt), '--input', str(src),
                     '--smiles-column', 'smi', '--output', str(out),
                     '--batch-size', '4', '--quiet']) == 0
    rows = read_csv(out)
    assert list(rows[0]) == ['name', 'smi', 'prediction', 'error']
    assert [r['name'] for r in rows] == [f'm{i}, batch "7"'
                                         for i in range(7)]
    assert [r['smi'] for r in rows] == smiles
    assert all(r['prediction'] and not r['error'] for r in rows[:5])
    assert 'empty' in rows[5]['error'] and "'Si'" in rows[6]['error']
    err = capsys.readouterr().err
    assert 'Wrote 7 rows' in err and '5 predicted, 2 with an error' in err


def test_standard_input_to_standard_output(zinc_ckpt, zinc_smiles, zinc):
    text = ''.join(f'{s}\tZ{i}\n' for i, s in enumerate(zinc_smiles[:30]))
    result = run_script(PREDICT, '--checkpoint', str(zinc_ckpt), '--input',
                        '-', '--quiet', stdin=text + 'C1CC bad\n')
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r['name'] for r in rows] == [f'Z{i}' for i in range(30)] + [
        'bad']
    expected = zinc.predict(zinc_smiles[:30])
    assert [float(r['prediction']) for r in rows[:30]] == pytest.approx(
        [p.value for p in expected], abs=1e-6)
    assert 'could not be parsed' in rows[30]['error']
    assert 'Wrote 31 rows to standard output' in result.stderr


def test_standard_input_as_csv(zinc_ckpt, zinc_smiles, tmp_path, capsys,
                               monkeypatch):
    text = 'id,smiles\n' + ''.join(f'{i},{s}\n'
                                   for i, s in enumerate(zinc_smiles[:5]))
    monkeypatch.setattr('sys.stdin', io.TextIOWrapper(
        io.BytesIO(text.encode())))
    out = tmp_path / 'out.csv'
    assert cli.predict_main(['--checkpoint', str(zinc_ckpt), '--input', '-',
                     '--input-format', 'csv', '--output', str(out),
                     '--quiet']) == 0
    assert [r['id'] for r in read_csv(out)] == ['0', '1', '2', '3', '4']
    assert json.loads(record_path(out).read_text())['input_sha256'] is None


def test_sdf_with_a_broken_record(zinc_ckpt, zinc_smiles, tmp_path, capsys):
    path = tmp_path / 'lib.sdf.gz'
    path.write_bytes(gzip.compress((
        sdf_text(zinc_smiles[:2], ['first', 'second']) + GARBAGE_RECORD +
        sdf_text(zinc_smiles[2:4], ['third', 'fourth'])).encode()))
    out = tmp_path / 'out.csv'
    assert cli.predict_main(['--checkpoint', str(zinc_ckpt), '--input', str(path),
                     '--output', str(out), '--quiet']) == 0
    rows = read_csv(out)
    assert [r['name'] for r in rows] == ['first', 'second', 'broken',
                                         'third', 'fourth']
    assert [bool(r['prediction']) for r in rows] == [True, True, False,
                                                     True, True]
    assert 'could not be read by RDKit' in rows[2]['error']
    assert '4 predicted, 1 with an error' in capsys.readouterr().err


def test_progress_bar_and_quiet(zinc_ckpt, zinc_smiles, tmp_path):
    src = tmp_path / 'lib.smi'
    src.write_text('\n'.join(zinc_smiles[:50]) + '\n')
    common = ['--checkpoint', str(zinc_ckpt), '--input', str(src)]
    loud = run_script(PREDICT, *common, '--output', str(tmp_path / 'a.csv'))
    assert 'Predicting: 100%' in loud.stderr and 'mol/s' in loud.stderr
    quiet = run_script(PREDICT, *common, '--output', str(tmp_path / 'b.csv'),
                       '--quiet')
    assert quiet.stderr.count('\n') == 1 and 'Wrote 50 rows' in quiet.stderr
    assert (tmp_path / 'a.csv').read_bytes() == \
        (tmp_path / 'b.csv').read_bytes()


def test_interrupted_run_says_how_to_continue(zinc_ckpt, zinc_smiles,
                                              tmp_path, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline_module, 'predict_file', interrupted)
    src = tmp_path / 'lib.smi'
    src.write_text('CCO\n')
    out = tmp_path / 'out.csv'
    assert cli.predict_main(['--checkpoint', str(zinc_ckpt), '--input', str(src),
                     '--output', str(out)]) == 130
    err = capsys.readouterr().err
    assert err.startswith('error: interrupted') and '--resume' in err


def test_ensemble_table_and_file(zinc_members, zinc_smiles, tmp_path,
                                 capsys):
    ensemble = Predictor.from_checkpoints(zinc_members)
    smiles = ['CCO', 'c1ccccc1O', 'C1CC']
    assert cli.predict_main(['--checkpoint', *map(str, zinc_members),
                     '--smiles', *smiles]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].split() == ['smiles', 'prediction', 'prediction_std',
                                'error']
    for line, p in zip(lines[1:3], ensemble.predict(smiles)):
        assert [float(x) for x in line.split()[1:3]] == pytest.approx(
            [p.value, p.std], rel=1e-5)
    assert 'could not be parsed' in lines[3]
    assert ('prediction = mean over the 3 members of the regression value'
            in captured.err)
    assert ('prediction_std = the population standard deviation across the '
            'members' in captured.err)
    # A run directory is a member as well as its model.safetensors.
    run = tmp_path / 'run'
    run.mkdir()
    (run / 'model.safetensors').write_bytes(zinc_members[2].read_bytes())
    src = tmp_path / 'lib.smi'
    src.write_text('\n'.join(zinc_smiles[:20]) + '\n')
    out = tmp_path / 'out.csv'
    assert cli.predict_main(['--checkpoint', *map(str, zinc_members[:2]), str(run),
                     '--input', str(src), '--output', str(out), '--quiet',
                     '--num-workers', '0']) == 0
    rows = read_csv(out)
    assert list(rows[0]) == ['smiles', 'name', 'prediction',
                             'prediction_std', 'error']
    expected = ensemble.predict(zinc_smiles[:20], num_workers=0)
    assert [(float(r['prediction']), float(r['prediction_std']))
            for r in rows] == [(p.value, p.std) for p in expected]
    record = json.loads(record_path(out).read_text())
    assert record['model_fingerprint'] == ensemble.fingerprint
    assert str(run / 'model.safetensors') in record['model_source']
    assert 'prediction_std = ' in capsys.readouterr().err


def test_ensemble_of_mismatching_checkpoints(zinc_members, tmp_path,
                                             capsys):
    odd = save_zinc_model(tmp_path / 'odd.safetensors', seed=3,
                          task='binary')
    _fails(['--checkpoint', zinc_members[0], odd, '--smiles', 'CCO'], capsys,
           f"Ensemble member {odd} has task 'binary' but {zinc_members[0]} "
           f"has 'regression'")


# Bad input ###################################################################


@pytest.fixture
def files(zinc_ckpt, zinc_smiles, tmp_path):
    """The inputs of the bad-input cases."""
    names = {}
    names['csv'] = write_csv(tmp_path / 'in.csv', ['id', 'mol'],
                             [[str(i), s] for i, s in
                              enumerate(zinc_smiles[:20])])
    names['smi'] = tmp_path / 'in.smi'
    names['smi'].write_text('\n'.join(zinc_smiles[:20]) + '\n')
    names['text'] = tmp_path / 'x.safetensors'
    names['text'].write_text('hello')
    names['foreign'] = tmp_path / 'f.safetensors'
    save_file({'w': torch.zeros(1)}, str(names['foreign']))
    run = tmp_path / 'run'
    (run / 'checkpoints').mkdir(parents=True)
    torch.save({'state_dict': {}}, run / 'checkpoints' / 'last.ckpt')
    (run / 'model.safetensors').write_bytes(zinc_ckpt.read_bytes())
    names['last'] = run / 'checkpoints' / 'last.ckpt'
    names['run'] = run
    names['empty'] = write_csv(tmp_path / 'empty.csv', ['smiles'], [])
    names['other_model'] = save_zinc_model(tmp_path / 'other.safetensors',
                                           seed=9)
    return names


CASES = {
    'missing_checkpoint': (['--checkpoint', '{tmp}/none', '--smiles', 'C'],
                           'does not exist'),
    'text_checkpoint': (['--checkpoint', '{text}', '--smiles', 'C'],
                        'not a readable safetensors'),
    'foreign_safetensors': (['--checkpoint', '{foreign}', '--smiles', 'C'],
                            'not a graphormer-sepnorm'),
    'training_checkpoint': (['--checkpoint', '{last}', '--smiles', 'C'],
                            'is a Lightning training checkpoint, not a '
                            'graphormer-sepnorm model checkpoint; it was not '
                            'loaded (that would mean unpickling it); pass the '
                            'run directory {run}'),
    'missing_column': (['--input', '{csv}'],
                       "no column 'smiles' (columns present: 'id', 'mol')"),
    'missing_input': (['--input', '{tmp}/none.csv'], 'does not exist'),
    'unknown_format': (['--input', '{tmp}/lib.txt'], '--input-format'),
    'bad_device': (['--smiles', 'C', '--device', 'nonsense'], 'device'),
    'bad_batch_size': (['--smiles', 'C', '--batch-size', '0'],
                       '--batch-size must be a positive integer'),
    'bad_chunk_size': (['--input', '{smi}', '--chunk-size', '-5'],
                       '--chunk-size must be a positive integer'),
    'shard_3_of_2': (['--input', '{smi}', '--shard', '3/2'],
                     '--shard must be K/N with 1 <= K <= N'),
    'shard_letters': (['--input', '{smi}', '--shard', 'a/b'],
                      "--shard must be K/N with whole numbers"),
    'shard_0_of_0': (['--input', '{smi}', '--shard', '0/0'],
                     'got 0/0'),
    'top_without_by': (['--input', '{smi}', '--top', '10'],
                       '--top needs --by COLUMN'),
    'top_unknown_column': (['--input', '{smi}', '--top', '10', '--by',
                            'logP'], "--by 'logP' is not a prediction column"
                           " of this model; choose one of: prediction"),
    'by_without_top': (['--input', '{smi}', '--by', 'prediction'],
                       'add --top K'),
    'top_zero': (['--input', '{smi}', '--top', '0', '--by', 'prediction'],
                 '--top must be a positive integer'),
    'empty_input': (['--input', '{empty}', '--output', '{tmp}/o.csv'],
                    'holds no molecules'),
    'resume_on_smiles': (['--smiles', 'C', '--resume'],
                         '--resume works on an --input file'),
    'resume_to_stdout': (['--input', '{smi}', '--resume'],
                         '--resume needs an output file'),
    'output_tsv': (['--input', '{smi}', '--output', '{tmp}/o.tsv'],
                   'name the file .csv or .csv.gz'),
    'output_is_input': (['--input', '{csv}', '--smiles-column', 'mol',
                         '--output', '{csv}'], 'is the input'),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_bad_input(case, files, zinc_ckpt, tmp_path, capsys):
    args, expected = CASES[case]
    values = {k: str(v) for k, v in files.items()}
    values['tmp'] = str(tmp_path)
    (tmp_path / 'lib.txt').write_text('CCO\n')
    args = [a.format(**values) for a in args]
    if '--checkpoint' not in args:
        args = ['--checkpoint', str(zinc_ckpt)] + args
    _fails(args, capsys, expected.format(**values))
    assert not (tmp_path / 'o.csv').exists()


def test_unwritable_output_fails_before_loading_the_model(files, tmp_path,
                                                          capsys,
                                                          monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError('the model was loaded before the output check')

    monkeypatch.setattr(predictor_module.Predictor, 'from_checkpoint', never)
    for output in ('/proc/nope.csv', '/proc/nope/deeper/out.csv'):
        _fails(['--checkpoint', files['run'], '--input', files['smi'],
                '--output', output], capsys, f'Cannot write the output '
               f'{output}')


def test_resume_onto_another_input_or_model(files, tmp_path, capsys):
    out = tmp_path / 'out.csv'
    common = ['--output', str(out), '--quiet', '--num-workers', '0']
    assert cli.predict_main(['--checkpoint', str(files['run']), '--input',
                     str(files['smi'])] + common) == 0
    capsys.readouterr()
    before = out.read_bytes()
    other = files['smi'].with_name('other.smi')
    other.write_text(files['smi'].read_text().replace('C', 'N', 1))
    _fails(['--checkpoint', files['run'], '--input', other, '--resume']
           + common, capsys, 'what differs: the input')
    _fails(['--checkpoint', files['other_model'], '--input', files['smi'],
            '--resume'] + common, capsys, 'what differs: the model')
    assert out.read_bytes() == before
    assert cli.predict_main(['--checkpoint', str(files['run']), '--input',
                     str(files['smi']), '--resume'] + common) == 0
    assert 'already complete (20 rows)' in capsys.readouterr().err


def test_bundled_model_not_installed(tmp_path):
    result = run_script(PREDICT, '--model', 'zinc', '--smiles', 'CCO',
                        env={ENV_VAR: str(tmp_path)})
    assert result.returncode == 2
    assert result.stderr.count('\n') == 1 and 'Traceback' not in \
        result.stderr
    assert 'No bundled' in result.stderr
    assert BUNDLED_MODELS['zinc'].train_config in result.stderr


def test_help(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.predict_main(['--help'])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for flag in ('--checkpoint', '--model', '--smiles', '--input',
                 '--input-format', '--smiles-column', '--output', '--resume',
                 '--shard', '--top', '--by', '--ascending', '--batch-size',
                 '--chunk-size', '--device', '--num-workers', '--quiet'):
        assert flag in out


def test_a_device_error_is_one_line_and_status_2(zinc_ckpt, zinc_smiles,
                                                 monkeypatch, capsys):
    from graphormer_sepnorm.predict import Predictor

    def fails(self, batch, predict, embed):
        raise RuntimeError('CUDA error: device-side assert triggered\n'
                           'Compile with TORCH_USE_CUDA_DSA')

    monkeypatch.setattr(Predictor, '_run_model', fails)
    assert cli.predict_main(['--checkpoint', str(zinc_ckpt), '--num-workers', '0',
                     '--smiles', *zinc_smiles[:3]]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'device-side assert' in err[0]
    assert '--batch-size' in err[0] and 'Traceback' not in err[0]
