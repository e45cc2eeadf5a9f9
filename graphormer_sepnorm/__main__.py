r"""``python -m graphormer_sepnorm COMMAND ...``: the ``graphormer-sepnorm``
command (:mod:`graphormer_sepnorm.cli`) without its console script."""
import sys

from .cli import main

if __name__ == '__main__':
    sys.exit(main(prog='python -m graphormer_sepnorm'))
