"""GraphBatchLoader: epoch orders from the seed alone, global batches
sharded between ranks, and mid-epoch resume."""
import torch

from graphormer_sepnorm.data.batch_loader import (GraphBatchLoader,
                                                  epoch_batches)


def test_epoch_batches_shard_global_batches():
    single = epoch_batches(50, 16, epoch=2, seed=7)
    ranks = [epoch_batches(50, 16, epoch=2, seed=7, rank=r, world_size=2)
             for r in range(2)]
    assert len(ranks[0]) == len(ranks[1]) == len(single) == 4
    for k, global_batch in enumerate(single):
        merged = torch.stack([ranks[0][k], ranks[1][k]], 1).view(-1)
        assert torch.equal(merged, global_batch)  # last one: 2 graphs, even
    # An odd last batch is padded (training) or not (evaluation).
    padded = [epoch_batches(51, 16, 0, 7, rank=r, world_size=2)
              for r in range(2)]
    assert [b.numel() for b in padded[0]] == [b.numel() for b in padded[1]]
    unpadded = [epoch_batches(51, 16, 0, 7, False, r, 2, pad=False)
                for r in range(2)]
    assert sorted(torch.cat([torch.cat(u) for u in unpadded]).tolist()) == \
        list(range(51))
    assert not torch.equal(epoch_batches(50, 16, 3, 7)[0], single[0])


def test_loader_state_resumes_mid_epoch(zinc_val):
    data = zinc_val
    loader = GraphBatchLoader(data, 100, shuffle=True, seed=1)
    loader.set_epoch(4)
    full = [b.y for b in loader]
    it = iter(loader)
    next(it), next(it), next(it)
    state = loader.state_dict()
    assert state == {'epoch': 4, 'batches_consumed': 3}
    resumed = GraphBatchLoader(data, 100, shuffle=True, seed=1)
    resumed.load_state_dict(state)
    rest = [b.y for b in resumed]
    assert len(rest) == len(full) - 3
    assert all(torch.equal(a, b) for a, b in zip(rest, full[3:]))
    resumed.set_epoch(5)  # the skip applies to the saved epoch only
    assert len(list(resumed)) == len(full)


def test_workers_persist_across_epochs_and_lay_batches_out(zinc_val):
    """Batches from two worker processes equal the in-process ones, epoch
    after epoch, each with the layout add_batch_layout gives it; the
    workers start once (one DataLoader iterator for every epoch)."""
    from graphormer_sepnorm.transforms import batch_layout
    layout = dict(num_buckets=3, multi_hop_max_dist=5)
    here = GraphBatchLoader(zinc_val, 100, shuffle=True, seed=1,
                            layout=layout)
    workers = GraphBatchLoader(zinc_val, 100, shuffle=True, seed=1,
                               num_workers=2, layout=layout)
    iterators = set()
    for epoch in (0, 1):
        here.set_epoch(epoch)
        workers.set_epoch(epoch)
        for a, b in zip(here, workers):
            assert torch.equal(a.y, b.y)
            expected = batch_layout(a, **layout)
            for got, want in zip(b.layout, expected):
                if isinstance(want, tuple):
                    assert all(torch.equal(g, w) for g, w in zip(got, want))
                elif isinstance(want, torch.Tensor):
                    assert torch.equal(got, want)
                else:
                    assert got == want
        iterators.add(id(workers._loader._iterator))
    assert len(iterators) == 1
