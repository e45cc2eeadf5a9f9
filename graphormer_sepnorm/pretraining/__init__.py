r"""Self-supervised pretraining: the corpus, objectives and training module."""

__all__ = []
