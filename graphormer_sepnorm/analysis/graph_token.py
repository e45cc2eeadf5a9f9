r"""Geometry of graph-token embeddings, the quantities the SepNorm paper
(`"On Separate Normalization in Self-supervised Transformers"
<https://arxiv.org/abs/2309.12931>`_) uses to argue that a separate
normalization of the [CLS]/graph token spreads the embeddings more evenly.
"""
import torch
import torch.nn.functional as F
from torch import Tensor


def pairwise_cosine(embeddings: Tensor) -> Tensor:
    r"""Cosine similarities of all unordered pairs of rows of
    :obj:`embeddings` :obj:`[num_items, channels]`, as a flat tensor of
    length :math:`n(n-1)/2`."""
    _check(embeddings)
    unit = F.normalize(embeddings.double(), dim=-1)
    rows, cols = torch.triu_indices(unit.size(0), unit.size(0), offset=1)
    # From the n x n Gram matrix: gathering both rows of every pair first
    # would hold n(n-1)/2 x channels values (10 GB for MolHIV's 4,113 test
    # graphs at 80 channels).
    return (unit @ unit.t())[rows, cols]


def uniformity(embeddings: Tensor, t: float = 2.0) -> float:
    r"""Uniformity of `"Understanding Contrastive Representation Learning
    through Alignment and Uniformity on the Hypersphere"
    <https://arxiv.org/abs/2005.10242>`_:
    :math:`\log \mathbb{E}_{i<j} \exp(-t \lVert u_i - u_j \rVert^2)` over the
    L2-normalized rows :math:`u`. Lower is more uniform; :math:`0` when every
    embedding points the same way, :math:`-2t` at best for antipodal pairs.

    Args:
        embeddings (torch.Tensor): :obj:`[num_items, channels]`.
        t (float, optional): Temperature. (default: :obj:`2.0`)
    """
    # ||u_i - u_j||^2 = 2 - 2 cos(u_i, u_j) for unit vectors.
    squared_distance = 2.0 - 2.0 * pairwise_cosine(embeddings)
    return float(torch.logsumexp(-t * squared_distance, 0) -
                 torch.log(torch.tensor(float(squared_distance.numel()))))


def anisotropy(embeddings: Tensor) -> float:
    r"""Anisotropy as in `"How Contextual are Contextualized Word
    Representations?" <https://arxiv.org/abs/1909.00512>`_: the mean cosine
    similarity of distinct embeddings. Near :math:`1` when they crowd into a
    narrow cone, near :math:`0` for directions spread over the sphere.

    Args:
        embeddings (torch.Tensor): :obj:`[num_items, channels]`.
    """
    return float(pairwise_cosine(embeddings).mean())


@torch.no_grad()
def graph_token_embeddings(model: torch.nn.Module, dataset,
                           batch_size: int = 256,
                           device: str = 'cpu') -> Tensor:
    r"""The graph-token embeddings :obj:`[num_graphs, hidden_channels]` that
    a :class:`~graphormer_sepnorm.GraphormerSepNorm` head reads, for every
    graph of :obj:`dataset`, in evaluation mode."""
    from ..data.graphormer_loader import GraphormerDataLoader
    from ..transforms.batch_layout import layout_options_for
    model.eval()
    loader = GraphormerDataLoader(dataset, batch_size,
                                  layout=layout_options_for(model, device))
    return torch.cat([model.graph_embedding(batch.to(device)).cpu()
                      for batch in loader])


def _check(embeddings: Tensor) -> None:
    if embeddings.dim() != 2 or embeddings.size(0) < 2:
        raise ValueError(f"need a [num_items >= 2, channels] tensor, got "
                         f"shape {list(embeddings.shape)}")
