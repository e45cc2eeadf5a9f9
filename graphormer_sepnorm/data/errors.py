r"""The error raised for training data that cannot be used as it is."""

__all__ = ['DataError']


class DataError(ValueError):
    r"""Training data that cannot be used as it is (too few molecules for
    a batch, an empty split, a bad CSV): the message names the problem and
    the fix. The training CLI prints it as one ``error:`` line and exits
    with status 2."""
