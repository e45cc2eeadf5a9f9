"""Tests for graphormer_sepnorm.predict.workers: worker processes give the
in-process predictions bit for bit, in order, with a bounded number of
chunks in flight, and a dying worker is a clear error."""
import os

import pytest
import torch

from graphormer_sepnorm.predict import PredictionError
from graphormer_sepnorm.predict import workers as workers_module
from graphormer_sepnorm.predict.molecules import WithColumns
from graphormer_sepnorm.predict.workers import Chunk, stream_chunks

from predict_helpers import one_thread, zinc, zinc_ckpt, zinc_smiles  # noqa


def test_worker_processes_equal_in_process(zinc, zinc_smiles):
    smiles = zinc_smiles[:120] + ['bad smiles', 'CC[Se]C']
    local = zinc.predict(smiles, batch_size=16, num_workers=0, chunk_size=20)
    pooled = zinc.predict(smiles, batch_size=16, num_workers=2,
                          chunk_size=20)
    assert pooled == local  # Same chunks, same batches: the same floats.
    assert [p.smiles for p in pooled] == smiles
    assert not pooled[-1].ok and not pooled[-2].ok


def test_chunks_in_flight_are_bounded(zinc, zinc_smiles):
    pulled = []

    def chunks():
        for start in range(0, 200, 10):
            pulled.append(start)
            yield Chunk(zinc_smiles[start:start + 10], context=start)

    stream = stream_chunks(
        lambda molecules, kind: zinc.predict_chunk(molecules, 8, kind),
        chunks(), num_workers=2)
    seen = []
    for chunk, predictions in stream:
        # At most 2 per worker queued beyond the one being returned.
        assert len(pulled) - len(seen) <= 2 * 2 + 1
        seen.append(chunk.context)
        assert [p.smiles for p in predictions] == \
            zinc_smiles[chunk.context:chunk.context + 10]
    assert seen == list(range(0, 200, 10))


def test_workers_warm_up_on_the_inputs_first_molecule():
    # This process runs the function once before forking the workers, so
    # that they inherit its loaded code; on a molecule the function takes:
    # a fixed SMILES would be an error row for a model that reads feature
    # columns, and an SDF input's molecules are records.
    calls = []

    def function(molecules, kind):
        calls.append((list(molecules), kind))
        return [m.text for m in molecules]

    chunks = [Chunk([WithColumns(f'C{"C" * k}O', [float(k)])
                     for k in range(start, start + 3)], kind='sdf')
              for start in (0, 3, 6)]
    results = list(stream_chunks(function, chunks, num_workers=2))
    assert calls == [([chunks[0].molecules[0]], 'sdf')]
    # An empty input, even with workers asked for, yields nothing.
    assert list(stream_chunks(function, [], num_workers=2)) == []
    assert [r for _, r in results] == [
        [m.text for m in c.molecules] for c in chunks]


def test_workers_only_for_more_than_one_chunk():
    decide = workers_module.worker_count
    assert decide(None, True, several_chunks=False, cores=4) == 0
    assert decide(None, True, several_chunks=True, cores=4) == 4
    assert decide(None, True, several_chunks=True, cores=1) == 0
    assert decide(0, True, several_chunks=True, cores=4) == 0
    assert decide(3, True, several_chunks=False, cores=4) == 3
    with pytest.raises(PredictionError, match='non-negative'):
        decide(-1, True, several_chunks=True, cores=4)


def test_a_gpu_model_keeps_its_featurizing_workers():
    # The workers featurize on the CPU whatever the model's device; with the
    # model on a GPU one core is left to the process feeding it.
    decide = workers_module.worker_count
    assert decide(None, False, several_chunks=True, cores=16) == 15
    assert decide(None, False, several_chunks=True, cores=2) == 1
    assert decide(None, False, several_chunks=True, cores=1) == 0
    assert decide(None, False, several_chunks=False, cores=16) == 0
    assert decide(4, False, several_chunks=True, cores=16) == 4


def test_off_cpu_workers_featurize_and_this_process_runs_the_model(
        zinc, zinc_smiles):
    # on_cpu=False (the model on a GPU): the predictor's featurizing half
    # runs in the workers, its model half here; the values are those of
    # the whole chunk run in this process, bit for bit.
    parent, featurized_in, finished_in = os.getpid(), set(), set()
    featurize, run = zinc.chunk_functions(batch_size=16)

    def featurize_where(molecules, kind):
        return os.getpid(), featurize(molecules, kind)

    def finish(result):
        featurized_in.add(result[0])
        finished_in.add(os.getpid())
        return run(result[1])

    smiles = zinc_smiles[:60] + ['bad smiles']
    chunks = [Chunk(smiles[i:i + 20]) for i in range(0, len(smiles), 20)]
    results = list(stream_chunks(featurize_where, chunks, num_workers=2,
                                 on_cpu=False, finish=finish))
    assert finished_in == {parent}
    assert featurized_in and parent not in featurized_in
    predictions = [p for _, result in results for p in result.predictions]
    assert predictions == zinc.predict(smiles, batch_size=16, num_workers=0,
                                       chunk_size=20)
    assert not predictions[-1].ok


def test_a_predictor_off_cpu_streams_with_workers_and_the_model_here(
        zinc, monkeypatch):
    from graphormer_sepnorm.predict import running as running_module
    seen = {}
    real = running_module.stream_chunks

    def spy(function, chunks, num_workers, on_cpu, finish):
        seen.update(on_cpu=on_cpu, finish=finish is not None)
        zinc.device = torch.device('cpu')  # the model half runs here
        return real(function, chunks, num_workers, on_cpu, finish)

    monkeypatch.setattr(running_module, 'stream_chunks', spy)
    monkeypatch.setattr(zinc, 'device', torch.device('cuda'))
    assert [p.smiles for p in zinc.predict(['CCO', 'CC'], num_workers=0)] \
        == ['CCO', 'CC']
    assert seen == {'on_cpu': False, 'finish': True}


def test_a_dying_worker_is_a_clear_error(zinc, zinc_smiles, monkeypatch):
    parent = os.getpid()
    real = zinc.featurize_chunk

    def dies_in_a_worker(molecules, kind='smiles'):
        if os.getpid() != parent and 'CCO' in molecules:
            os._exit(3)
        return real(molecules, kind)

    monkeypatch.setattr(zinc, 'featurize_chunk', dies_in_a_worker)
    smiles = zinc_smiles[:40] + ['CCO'] + zinc_smiles[40:80]
    with pytest.raises(PredictionError, match='worker process died.*'
                       'num_workers=0'):
        zinc.predict(smiles, num_workers=2, chunk_size=20)
