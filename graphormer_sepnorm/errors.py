r"""The package's errors that light modules raise or subclass without
loading torch (the bundled-model registry, which a command's ``--help``
lists); :mod:`graphormer_sepnorm.checkpoint` re-exports them."""

__all__ = ['CheckpointError']


class CheckpointError(ValueError):
    r"""A checkpoint file is missing, unreadable or incompatible."""
