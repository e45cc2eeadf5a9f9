from typing import Literal, Sequence

import torch
from torch import Tensor
from torch.nn import Embedding, Module


def reads_back_cheaply(tensor: Tensor) -> bool:
    r"""Whether reading :obj:`tensor`'s values on the host costs nothing
    but the read: a CPU tensor outside :func:`torch.compile` (on an
    accelerator it waits for the device; in a compiled graph it breaks the
    graph)."""
    return tensor.device.type == 'cpu' and not torch.compiler.is_compiling()


class CategoricalEmbedding(Module):
    r"""Embeds a :obj:`[num_items, num_columns]` tensor of categorical ids,
    one vocabulary per column, and sums or averages the column embeddings
    (Graphormer sums atom features and averages bond features).

    All columns share one :class:`torch.nn.Embedding` table in which column
    :math:`c` starts at row :math:`\sum_{c' < c} \textrm{sizes}_{c'}`, as the
    reference implementation's offset trick does, but sized from the data
    instead of a fixed 512 rows per column.

    Ids outside a column's vocabulary raise a :class:`ValueError` that names
    the column, the offending value and the vocabulary size, instead of an
    index error deep inside the embedding. The check reads the ids back, so
    it runs on CPU tensors outside :func:`torch.compile` only: on an
    accelerator it would stall every step (the ids there come from this
    package's featurizers, whose vocabularies the model is built from).

    Args:
        vocab_sizes (Sequence[int]): Number of distinct ids of each column.
        channels (int): Size of each embedding.
        reduce (str, optional): :obj:`"sum"` or :obj:`"mean"` over the
            columns. (default: :obj:`"sum"`)
        name (str, optional): Name of the input in error messages.
            (default: :obj:`"x"`)
    """
    def __init__(self, vocab_sizes: Sequence[int], channels: int,
                 reduce: Literal['sum', 'mean'] = 'sum',
                 name: str = 'x') -> None:
        super().__init__()
        vocab_sizes = [int(size) for size in vocab_sizes]
        if not vocab_sizes or min(vocab_sizes) < 1:
            raise ValueError(f"vocab sizes of '{name}' must be positive, got "
                             f"{vocab_sizes}")
        if reduce not in ('sum', 'mean'):
            raise ValueError(f"reduce must be 'sum' or 'mean', got {reduce!r}")
        self.vocab_sizes = vocab_sizes
        self.channels = channels
        self.reduce = reduce
        self.name = name
        sizes = torch.tensor(vocab_sizes)
        self.register_buffer('offsets', torch.cumsum(sizes, 0) - sizes,
                             persistent=False)
        self.register_buffer('sizes', sizes, persistent=False)
        self.embedding = Embedding(int(sizes.sum()), channels)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""Graphormer's initialization: normal with standard deviation 0.02."""
        torch.nn.init.normal_(self.embedding.weight, std=0.02)

    def forward(self, ids: Tensor) -> Tensor:
        r"""Embeds :obj:`ids` (:obj:`[num_items, num_columns]` or
        :obj:`[num_items]` for one column) into :obj:`[num_items, channels]`.
        """
        if ids.dim() == 1:
            ids = ids.unsqueeze(-1)
        self._check(ids)
        out = self.embedding(ids + self.offsets)
        return out.sum(dim=1) if self.reduce == 'sum' else out.mean(dim=1)

    def _check(self, ids: Tensor) -> None:
        if ids.dtype not in (torch.long, torch.int):
            raise ValueError(
                f"'{self.name}' must hold integer category ids (torch.long), "
                f"got {ids.dtype}; this model embeds categorical features")
        if ids.size(-1) != len(self.vocab_sizes):
            raise ValueError(
                f"'{self.name}' has {ids.size(-1)} columns but the model was "
                f"built for {len(self.vocab_sizes)} (vocab sizes "
                f"{self.vocab_sizes}); build the model with the dataset's "
                f"vocabulary")
        if ids.numel() == 0 or not reads_back_cheaply(ids):
            return
        bad = (ids < 0) | (ids >= self.sizes)
        if bool(bad.any()):
            item, column = (int(v) for v in bad.nonzero()[0])
            raise ValueError(
                f"'{self.name}'[{item}, {column}] = {int(ids[item, column])} is "
                f"outside the vocabulary of column {column} (ids 0.."
                f"{self.vocab_sizes[column] - 1}); the input uses a different "
                f"featurization than the model, or the model's vocabulary "
                f"sizes are too small for this dataset")

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}({self.vocab_sizes}, '
                f'{self.channels}, reduce={self.reduce!r})')
