"""Graph-token embeddings (Predictor.embed, predict_file(embeddings=...),
--embeddings): equal to GraphormerSepNorm.graph_embedding on the same
molecules featurized and batched the standard PyG way, in input order with
a NaN row for each molecule that cannot be predicted, as .npy and CSV."""
import csv
import gzip

import numpy as np
import pytest
import torch
from torch_geometric.data import Batch

from graphormer_sepnorm import AddShortestPaths
from graphormer_sepnorm.data.featurize import smiles_to_zinc_graph
from graphormer_sepnorm.cli import predict as cli
from graphormer_sepnorm.predict import PredictionError, Predictor
from graphormer_sepnorm.predict import file_run as file_run_module
from graphormer_sepnorm.predict.embeddings import (EmbeddingWriter,
                                                  check_embeddings_path)

from predict_helpers import (one_thread, write_csv, zinc,  # noqa: F401
                             zinc_ckpt, zinc_members, zinc_smiles)
from test_readers import sdf_text

BAD = ('not a smiles', 'CC[Se]C')  # Unparsable; an atom ZINC cannot encode.


def reference(model, smiles: list[str]) -> np.ndarray:
    """graph_embedding of each SMILES, featurized by the PyG featurizer and
    batched by Batch.from_data_list (not the predictor's arrays), NaN rows
    for the bad ones."""
    good = [s for s in smiles if s not in BAD]
    transform = AddShortestPaths(model.max_nodes)
    batch = Batch.from_data_list([transform(smiles_to_zinc_graph(s))
                                  for s in good])
    with torch.no_grad():
        rows = iter(model.graph_embedding(batch).numpy())
    return np.stack([np.full(model.hidden_channels, np.nan, np.float32)
                     if s in BAD else next(rows) for s in smiles])


@pytest.fixture
def molecules(zinc_smiles) -> list[str]:
    """Real molecules with the bad ones in the middle (not at a chunk
    boundary)."""
    return zinc_smiles[:23] + [BAD[0]] + zinc_smiles[23:45] + [BAD[1]] + \
        zinc_smiles[45:50]


def _equal_with_nan(a: np.ndarray, b: np.ndarray) -> None:
    assert a.shape == b.shape and a.dtype == np.float32
    assert np.array_equal(np.isnan(a), np.isnan(b))
    assert np.allclose(a[~np.isnan(a)], b[~np.isnan(b)], atol=1e-5)


def test_embed_equals_graph_embedding(zinc, molecules):
    embeddings = zinc.embed(molecules, batch_size=8, chunk_size=16,
                            num_workers=0)
    expected = reference(zinc.model, molecules)
    _equal_with_nan(embeddings, expected)
    assert np.isnan(embeddings[[23, 46]]).all()
    assert not np.isnan(np.delete(embeddings, [23, 46], axis=0)).any()
    # Not all rows alike: the order of the rows is the order of the input.
    assert np.abs(embeddings[0] - embeddings[1]).max() > 1e-3
    assert zinc.embedding_columns == [f'embedding_{j}' for j in range(16)]


def test_predictions_and_embeddings_come_from_one_encoder_pass(
        zinc, molecules, monkeypatch):
    # --embeddings used to run the encoder twice per batch: once for the
    # predictions, once for the embeddings.
    good = [s for s in molecules if s not in BAD]
    calls = []
    encode = zinc.model.graph_embedding
    monkeypatch.setattr(zinc.model, 'graph_embedding',
                        lambda batch: calls.append(batch) or encode(batch))
    result = zinc.run_chunk(molecules, batch_size=8, embed=True)
    assert len(calls) == -(-len(good) // 8)  # One pass per batch of 8.
    _equal_with_nan(result.embeddings, reference(zinc.model, molecules))
    # The predictions are the model's forward on the same molecules.
    expected = iter(zinc.predict(good, batch_size=8, num_workers=0))
    for prediction, smiles in zip(result.predictions, molecules):
        if smiles in BAD:
            assert prediction.error
        else:
            assert prediction.value == pytest.approx(next(expected).value,
                                                     abs=1e-6)


def test_workers_give_the_same_embeddings(zinc, molecules):
    local = zinc.embed(molecules, chunk_size=16, num_workers=0)
    pooled = zinc.embed(molecules, chunk_size=16, num_workers=2)
    assert np.array_equal(local, pooled, equal_nan=True)
    assert zinc.embed([], num_workers=0).shape == (0, 16)


def test_ensemble_puts_members_side_by_side(zinc_members, molecules):
    ensemble = Predictor.from_checkpoints(zinc_members)
    embeddings = ensemble.embed(molecules, num_workers=0)
    assert embeddings.shape == (len(molecules), 3 * 16)
    for k, path in enumerate(zinc_members):
        member = Predictor.from_checkpoint(path).model
        _equal_with_nan(embeddings[:, 16 * k:16 * (k + 1)],
                        reference(member, molecules))
    assert ensemble.embedding_columns[:2] == ['member0_embedding_0',
                                              'member0_embedding_1']
    assert ensemble.embedding_columns[16] == 'member1_embedding_0'


@pytest.mark.parametrize('name', ['emb.npy', 'emb.csv', 'emb.csv.gz'])
def test_file_embeddings_beside_the_predictions(zinc, molecules, tmp_path,
                                                name):
    src = write_csv(tmp_path / 'in.csv', ['id', 'smiles'],
                    [[f'm{k}', s] for k, s in enumerate(molecules)])
    path = tmp_path / 'out' / name
    summary = zinc.predict_file(src, tmp_path / 'pred.csv', chunk_size=16,
                                batch_size=8, num_workers=0, progress=False,
                                embeddings=path)
    assert summary.embeddings == str(path)
    if name.endswith('.npy'):
        embeddings = np.load(path)
    else:
        opener = gzip.open if name.endswith('.gz') else open
        with opener(path, 'rt', newline='') as f:
            rows = list(csv.reader(f))
        assert rows[0] == ['smiles'] + zinc.embedding_columns
        assert [row[0] for row in rows[1:]] == molecules
        assert rows[24][1:] == ['nan'] * 16  # Data row 23: 'not a smiles'.
        embeddings = np.array([row[1:] for row in rows[1:]], np.float32)
    _equal_with_nan(embeddings, reference(zinc.model, molecules))
    # The same rows as zinc.embed, bit for bit (CSV: the shortest decimal
    # that reads back as the same float32).
    assert np.array_equal(embeddings, zinc.embed(
        molecules, batch_size=8, chunk_size=16, num_workers=0),
        equal_nan=True)
    assert [p.name for p in path.parent.iterdir()] == [name]  # No leftovers.


def test_worker_processes_and_sdf_rows(zinc, zinc_smiles, tmp_path):
    """Embeddings come back from worker processes, and SDF records (parsed
    there) give the embeddings of their molecules."""
    smiles = zinc_smiles[:40]
    src = tmp_path / 'in.sdf'
    src.write_text(sdf_text(smiles, [f'z{k}' for k in range(40)]))
    path = tmp_path / 'emb.npy'
    zinc.predict_file(src, tmp_path / 'pred.csv', chunk_size=8,
                      num_workers=2, progress=False, embeddings=path)
    with open(tmp_path / 'pred.csv', newline='') as f:
        written = [row['smiles'] for row in csv.DictReader(f)]
    _equal_with_nan(np.load(path), reference(zinc.model, written))


def test_an_interrupted_run_leaves_no_embedding_file(zinc, molecules,
                                                     tmp_path, monkeypatch):
    real_stream = file_run_module.stream_chunks

    def interrupted(*args, **kwargs):
        for count, item in enumerate(real_stream(*args, **kwargs)):
            if count == 2:
                raise KeyboardInterrupt
            yield item

    monkeypatch.setattr(file_run_module, 'stream_chunks', interrupted)
    src = write_csv(tmp_path / 'in.csv', ['smiles'],
                    [[s] for s in molecules])
    with pytest.raises(KeyboardInterrupt):
        zinc.predict_file(src, tmp_path / 'pred.csv', chunk_size=8,
                          num_workers=0, progress=False,
                          embeddings=tmp_path / 'emb.npy')
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        'in.csv', 'pred.csv', 'pred.csv.meta.json']


def test_writer_refuses_rows_of_the_wrong_width(tmp_path):
    writer = EmbeddingWriter(tmp_path / 'e.npy', ['a', 'b'])
    with pytest.raises(ValueError, match='width 2'):
        writer.write(['CC'], np.zeros((1, 3)))
    writer.close()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize('options,message', [
    ({'resume': True}, '--embeddings cannot be combined with --resume'),
    ({'shard': '1/2'}, '--embeddings cannot be combined with --shard'),
    ({'top': 3, 'by': 'prediction'},
     '--embeddings cannot be combined with --top'),
    ({'embeddings': 'emb.txt'}, 'name it .npy'),
    ({'embeddings': 'in.csv'}, 'embeddings file .* is the input'),
    ({'embeddings': 'pred.csv'}, 'embeddings file .* is the output'),
])
def test_bad_requests_fail_before_any_work(zinc, zinc_smiles, tmp_path,
                                           monkeypatch, options, message):
    monkeypatch.chdir(tmp_path)
    write_csv(tmp_path / 'in.csv', ['smiles'], [[s] for s in zinc_smiles[:5]])
    options = {'embeddings': 'emb.npy', **options}
    with pytest.raises(PredictionError, match=message):
        zinc.predict_file('in.csv', 'pred.csv', progress=False, **options)
    assert sorted(p.name for p in tmp_path.iterdir()) == ['in.csv']


def test_command_line(zinc_ckpt, zinc, molecules, tmp_path, capsys):
    src = tmp_path / 'in.smi'
    src.write_text('\n'.join(molecules) + '\n')
    emb = tmp_path / 'emb.npy'
    assert cli.predict_main(['--checkpoint', str(zinc_ckpt), '--input', str(src),
                     '--output', str(tmp_path / 'pred.csv'), '--embeddings',
                     str(emb), '--num-workers', '0', '--quiet']) == 0
    assert f'embeddings in {emb}' in capsys.readouterr().err
    _equal_with_nan(np.load(emb), reference(zinc.model, molecules))
    # --smiles: the table as before, and the embeddings file.
    emb_csv = tmp_path / 'few.csv'
    assert cli.predict_main(['--checkpoint', str(zinc_ckpt), '--smiles', 'CCO',
                     BAD[0], 'c1ccccc1O', '--embeddings', str(emb_csv)]) == 0
    assert capsys.readouterr().out.startswith('smiles')
    with open(emb_csv, newline='') as f:
        rows = list(csv.reader(f))
    assert [row[0] for row in rows] == ['smiles', 'CCO', BAD[0], 'c1ccccc1O']
    _equal_with_nan(np.array([row[1:] for row in rows[1:]], np.float32),
                    reference(zinc.model, ['CCO', BAD[0], 'c1ccccc1O']))
    # Refused before the model is loaded.
    assert cli.predict_main(['--checkpoint', str(zinc_ckpt), '--input', str(src),
                     '--output', str(tmp_path / 'p2.csv'), '--top', '3',
                     '--by', 'prediction', '--embeddings', str(emb)]) == 2
    assert 'cannot be combined with --top' in capsys.readouterr().err


def test_a_killed_runs_hidden_file_is_removed_at_the_next_start(tmp_path):
    """kill -9 leaves the hidden .emb.npy (nothing can remove it then); the
    next run writing emb.npy removes it when it checks the path, before any
    work (issue 33)."""
    stale = tmp_path / '.emb.npy'
    stale.write_bytes(b'\x93NUMPY' + bytes(1000))
    check_embeddings_path(tmp_path / 'emb.npy')
    assert list(tmp_path.iterdir()) == []


def test_a_folder_that_takes_no_file_is_named():
    """/proc exists, yet creating a file in it fails with 'No such file or
    directory': the message says the folder exists and takes no file."""
    with pytest.raises(PredictionError) as info:
        check_embeddings_path('/proc/emb.npy')
    assert str(info.value) == (
        'Cannot write the embeddings file /proc/emb.npy (the folder /proc '
        'exists but takes no new file: No such file or directory); choose a '
        'writable path')
