"""Tests for graphormer_sepnorm.predict.workers: worker processes give the
in-process predictions bit for bit, in order, with a bounded number of
chunks in flight, and a dying worker is a clear error."""
import os

import pytest

from graphormer_sepnorm.predict import PredictionError
from graphormer_sepnorm.predict import workers as workers_module
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


def test_workers_only_for_more_than_one_chunk(monkeypatch):
    monkeypatch.setattr(workers_module, 'available_cores', lambda: 4)
    decide = workers_module._num_workers
    assert decide(None, True, several_chunks=False) == 0
    assert decide(None, True, several_chunks=True) == 4
    assert decide(0, True, several_chunks=True) == 0
    assert decide(3, True, several_chunks=False) == 3
    assert decide(None, False, several_chunks=True) == 0  # Not on CPU.
    with pytest.raises(PredictionError, match='non-negative'):
        decide(-1, True, several_chunks=True)
    with pytest.raises(PredictionError, match='with a GPU'):
        decide(2, False, several_chunks=True)


def test_a_dying_worker_is_a_clear_error(zinc, zinc_smiles, monkeypatch):
    parent = os.getpid()
    real = zinc.predict_chunk

    def dies_in_a_worker(molecules, batch_size, kind='smiles'):
        if os.getpid() != parent and 'CCO' in molecules:
            os._exit(3)
        return real(molecules, batch_size, kind)

    monkeypatch.setattr(zinc, 'predict_chunk', dies_in_a_worker)
    smiles = zinc_smiles[:40] + ['CCO'] + zinc_smiles[40:80]
    with pytest.raises(PredictionError, match='worker process died.*'
                       'num_workers=0'):
        zinc.predict(smiles, num_workers=2, chunk_size=20)
