r"""Compare the graph-token geometry of trained models (SepNorm vs
ShareNorm): uniformity and anisotropy on a split of their dataset, a JSON
summary and a plot of the pairwise cosine similarities."""
import json
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from ..training.evaluate import load_checkpoint_split
from .graph_token import (anisotropy, graph_token_embeddings, pairwise_cosine,
                          uniformity)

PathLike = Union[str, Path]


def graph_token_report(checkpoints: Sequence[PathLike], output_dir: PathLike,
                       split: str = 'test',
                       data_overrides: Optional[dict[str, Any]] = None,
                       batch_size: int = 256,
                       device: str = 'cpu') -> list[dict[str, Any]]:
    r"""Writes :obj:`graph_token_geometry.json` and
    :obj:`graph_token_geometry.png` into :obj:`output_dir` and returns one
    row per checkpoint (label, norm, uniformity, anisotropy, graphs)."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    rows, similarities = [], []
    for checkpoint in checkpoints:
        model, card, info, dataset, path = load_checkpoint_split(
            checkpoint, split, data_overrides, device)
        embeddings = graph_token_embeddings(model, dataset, batch_size,
                                            device)
        label = f"{path.parent.name} ({model.config['norm']})"
        rows.append({
            'label': label,
            'checkpoint': str(path),
            'dataset': info.name,
            'split': split,
            'norm': model.config['norm'],
            'num_graphs': int(embeddings.size(0)),
            'uniformity': uniformity(embeddings),
            'anisotropy': anisotropy(embeddings),
        })
        similarities.append((label, pairwise_cosine(embeddings)))
    with open(output_dir / 'graph_token_geometry.json', 'w') as f:
        json.dump(rows, f, indent=2)
    _plot(similarities, rows, output_dir / 'graph_token_geometry.png')
    return rows


def _plot(similarities, rows, path: Path) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for (label, cosine), row in zip(similarities, rows):
        ax.hist(cosine.numpy(), bins=100, range=(-1, 1), histtype='step',
                density=True,
                label=f"{label}: uniformity {row['uniformity']:.2f}, "
                f"anisotropy {row['anisotropy']:.2f}")
    ax.set_xlabel('cosine similarity of two graph-token embeddings')
    ax.set_ylabel('density')
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
