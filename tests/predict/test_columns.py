"""Output columns never overwrite input columns: a CSV holding its own labels
under the model's target name keeps them, the predictions get ``_pred``
(graphormer_sepnorm.predict.prediction.columns_beside, the pipeline and the
command line)."""
import csv

import pytest

from graphormer_sepnorm.cli import predict as cli
from graphormer_sepnorm.predict import Predictor
from graphormer_sepnorm.predict.prediction import columns_beside
from graphormer_sepnorm.predict.run_record import read_record

from predict_helpers import (one_thread, read_csv,  # noqa: F401
                             save_zinc_model, write_csv, zinc, zinc_ckpt,
                             zinc_members, zinc_smiles)


@pytest.mark.parametrize('taken,columns,with_std,expected', [
    (['smiles'], ['prediction'], False, ['prediction', 'error']),
    (['smiles', 'logp'], ['logp'], False, ['logp_pred', 'error']),
    (['logp', 'logp_pred'], ['logp'], False, ['logp_pred_pred', 'error']),
    (['error'], ['prediction'], False, ['prediction', 'error_pred']),
    (['prediction', 'error', 'error_pred'], ['prediction'], False,
     ['prediction_pred', 'error_pred_pred']),
    # The std column stays the partner of its prediction column.
    (['prediction_std'], ['prediction'], True,
     ['prediction_pred', 'prediction_pred_std', 'error']),
    (['a'], ['a', 'a_pred'], False, ['a_pred', 'a_pred_pred', 'error']),
    ([], ['a', 'b'], True, ['a', 'a_std', 'b', 'b_std', 'error']),
])
def test_names_by_hand(taken, columns, with_std, expected):
    assert columns_beside(taken, columns, with_std) == expected


def _labelled_csv(path, smiles, target):
    """Input columns: name, smiles, the target's own labels (some empty), a
    note with commas and quotes, and an error column of the lab's own."""
    rows = [[f'm{i}', s, '' if i % 4 == 0 else f'{i * 0.5 - 3:.3f}',
             f'batch "{i % 3}", plate {i}', 'none' if i % 2 else 'late']
            for i, s in enumerate(smiles)]
    return write_csv(path, ['name', 'smiles', target, 'note', 'error'], rows)


def _rows(path):
    with open(path, newline='') as f:
        return list(csv.reader(f))


def test_bundled_zinc_keeps_the_labels_of_its_target(zinc_smiles, tmp_path,
                                                     capsys):
    """The bundled ZINC model's prediction column is 'prediction': an input
    CSV with its own 'prediction' (and 'error') columns keeps them all, value
    for value; the model's values land in prediction_pred (one member here;
    the ensemble adds prediction_pred_std)."""
    bundled = Predictor.from_bundled('zinc-single')
    assert bundled.prediction_columns == ['prediction']
    assert Predictor.from_bundled('zinc').output_columns == [
        'prediction', 'prediction_std']
    smiles = zinc_smiles[:12] + ['not a smiles'] + zinc_smiles[12:20]
    src = _labelled_csv(tmp_path / 'labelled.csv', smiles, 'prediction')
    out = tmp_path / 'out.csv'
    assert cli.predict_main(['--model', 'zinc-single', '--input', str(src),
                             '--output', str(out), '--num-workers', '0',
                             '--quiet']) == 0
    written, given = _rows(out), _rows(src)
    assert written[0] == given[0] + ['prediction_pred', 'error_pred']
    assert [row[:5] for row in written] == given  # Every input cell kept.
    expected = bundled.predict(smiles, num_workers=0)
    assert [row[5] for row in written[1:]] == [
        repr(p.value) if p.ok else '' for p in expected]
    assert [row[6] for row in written[1:]] == [p.error or ''
                                               for p in expected]
    assert written[13][6] and written[13][5] == ''  # 'not a smiles'.
    assert ("the input's own prediction, error kept, written as "
            "prediction_pred, error_pred") in capsys.readouterr().err


def test_target_named_model_and_a_taken_pred_column(zinc_smiles, tmp_path):
    """A model trained on a CSV names its column as the target (logp); an
    input with logp and logp_pred already gets logp_pred_pred."""
    model = Predictor.from_checkpoint(save_zinc_model(
        tmp_path / 'logp.safetensors', target_names=('logp', )))
    src = write_csv(tmp_path / 'in.csv', ['smiles', 'logp', 'logp_pred'],
                    [[s, str(k), f'old{k}']
                     for k, s in enumerate(zinc_smiles[:30])])
    out = tmp_path / 'out.csv'
    model.predict_file(src, out, chunk_size=8, num_workers=0,
                       progress=False)
    rows = read_csv(out)
    assert list(rows[0]) == ['smiles', 'logp', 'logp_pred', 'logp_pred_pred',
                             'error']
    assert [(r['logp'], r['logp_pred']) for r in rows] == [
        (str(k), f'old{k}') for k in range(30)]
    expected = model.predict(zinc_smiles[:30], chunk_size=8, num_workers=0)
    assert [float(r['logp_pred_pred']) for r in rows] == [
        p.value for p in expected]


def test_ensemble_std_follows_its_renamed_column(zinc_members, zinc_smiles,
                                                 tmp_path):
    ensemble = Predictor.from_checkpoints(zinc_members)
    src = write_csv(tmp_path / 'in.csv', ['smiles', 'prediction_std'],
                    [[s, 'x'] for s in zinc_smiles[:5]])
    out = tmp_path / 'out.csv'
    ensemble.predict_file(src, out, num_workers=0, progress=False)
    rows = read_csv(out)
    assert list(rows[0]) == ['smiles', 'prediction_std', 'prediction_pred',
                             'prediction_pred_std', 'error']
    assert {r['prediction_std'] for r in rows} == {'x'}
    expected = ensemble.predict(zinc_smiles[:5], num_workers=0)
    assert [(float(r['prediction_pred']), float(r['prediction_pred_std']))
            for r in rows] == [(p.value, p.std) for p in expected]


def test_top_k_ranks_by_the_renamed_column(zinc, zinc_smiles, tmp_path):
    """--by names the model's column; with the input's own 'prediction' and
    'row' columns, the top-K file ranks by prediction_pred (as the record
    says, for resume and merge) and numbers rows in row_pred."""
    src = write_csv(tmp_path / 'in.csv', ['row', 'smiles', 'prediction'],
                    [[f'r{k}', s, '100'] for k, s in
                     enumerate(zinc_smiles[:40])])
    out = tmp_path / 'top.csv'
    zinc.predict_file(src, out, top=5, by='prediction', chunk_size=16,
                      num_workers=0, progress=False)
    rows = read_csv(out)
    assert list(rows[0]) == ['row_pred', 'row', 'smiles', 'prediction',
                             'prediction_pred']
    values = [p.value for p in zinc.predict(zinc_smiles[:40], chunk_size=16,
                                            num_workers=0)]
    best = sorted(range(40), key=lambda k: -values[k])[:5]
    assert [r['row_pred'] for r in rows] == [str(k + 1) for k in best]
    assert [r['row'] for r in rows] == [f'r{k}' for k in best]
    assert {r['prediction'] for r in rows} == {'100'}
    assert read_record(out).options['by'] == 'prediction_pred'


def test_help_states_the_rule(capsys):
    with pytest.raises(SystemExit):
        cli.predict_main(['--help'])
    text = ' '.join(capsys.readouterr().out.split())
    assert 'keeps every input column unchanged' in text
    assert '<column>_pred' in text
