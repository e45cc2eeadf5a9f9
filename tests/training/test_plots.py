"""Learning curves without the optional matplotlib: no curves.png, one
plain line that says how to get them, and the run's numbers unaffected;
with it, the figure is written."""
import sys

from graphormer_sepnorm.pretraining.plots import plot_pretraining_curves
from graphormer_sepnorm.training import plots

HISTORY = [dict(epoch=e, step=10 * e, train_loss=1.0 / (e + 1), lr=1e-3,
                val_mae=0.5 - 0.1 * e, test_mae=0.6 - 0.1 * e)
           for e in range(3)]


def test_without_matplotlib_no_figure_and_one_message(tmp_path, monkeypatch,
                                                     capsys):
    # None in sys.modules makes "import matplotlib" raise ImportError.
    monkeypatch.setitem(sys.modules, 'matplotlib', None)
    monkeypatch.setattr(plots, '_said_no_matplotlib', False)
    assert plots.plot_curves(HISTORY, tmp_path / 'a.png', 'mae') is None
    assert plot_pretraining_curves(HISTORY, tmp_path / 'b.png') is None
    assert list(tmp_path.iterdir()) == []
    err = capsys.readouterr().err.splitlines()
    assert err == [plots.NO_MATPLOTLIB]  # Once, for both figures.
    assert "pip install 'graphormer-sepnorm[plots]'" in err[0]


def test_with_matplotlib_the_figures_are_written(tmp_path):
    path = plots.plot_curves(HISTORY, tmp_path / 'curves.png', 'mae',
                             title='t')
    assert path == tmp_path / 'curves.png'
    assert path.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    path = plot_pretraining_curves(HISTORY, tmp_path / 'pre.png')
    assert path.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


def test_a_run_without_matplotlib_trains_and_says_so(zinc_root, tmp_path,
                                                     monkeypatch, capsys):
    import lightning  # noqa: F401
    import torchmetrics  # noqa: F401
    from graphormer_sepnorm.cli.train import train_main
    from training_helpers import zinc_args

    # Lightning and torchmetrics are imported first: they look for an
    # installed matplotlib by its metadata, then import it, which the block
    # below would break (where it is not installed, they skip it).
    monkeypatch.setitem(sys.modules, 'matplotlib', None)
    monkeypatch.setattr(plots, '_said_no_matplotlib', False)
    assert train_main(zinc_args(zinc_root, tmp_path, 'run',
                                'train.max_steps=4',
                                'optim.total_steps=4')) == 0
    run = tmp_path / 'run'
    assert (run / 'results.json').is_file()
    assert (run / 'model.safetensors').is_file()
    assert not (run / 'curves.png').exists()
    assert plots.NO_MATPLOTLIB in capsys.readouterr().err
