r"""The member files of a bundled model, checked against its registry
entry before any weights are loaded (for
:meth:`Predictor.from_bundled
<graphormer_sepnorm.predict.Predictor.from_bundled>`)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Union

from ..bundled import bundled_model_paths, get_bundled_model
from ..checkpoint import CheckpointError, read_card

__all__ = ['bundled_member_paths']

PathLike = Union[str, Path]


def bundled_member_paths(name: str, directory: Optional[PathLike] = None
                         ) -> list[Path]:
    r"""The member files of the bundled model :obj:`name`, ordered by seed
    (:func:`~graphormer_sepnorm.bundled.bundled_model_paths`), each with a
    model card naming the registered featurizer and task (read from the
    cards alone).

    Args:
        name (str): The registered name.
        directory (str or Path, optional): Folder of the member files
            instead of the installed one (see
            :func:`~graphormer_sepnorm.bundled.bundled_dir`).
            (default: :obj:`None`)

    Raises:
        ValueError: If :obj:`name` is not a registered model.
        BundledModelNotInstalled: If none of its members is installed.
        CheckpointError: If a member's card does not name the registered
            featurizer and task.
    """
    entry = get_bundled_model(name)
    paths = bundled_model_paths(entry.name, directory)
    for path in paths:
        card, _ = read_card(path)
        if (card.featurizer.strip().lower() != entry.featurizer
                or card.task != entry.task):
            raise CheckpointError(
                f"{path} is installed as a member of the bundled "
                f"'{entry.name}' model but its card says "
                f"featurizer={card.featurizer!r}, task={card.task!r} "
                f"(expected {entry.featurizer!r}, {entry.task!r}); "
                f"replace it with the right checkpoint")
    return paths
