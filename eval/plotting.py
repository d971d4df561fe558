"""The one way the experiments in `eval/` finish a figure."""

from __future__ import annotations

from pathlib import Path


def save_figure(fig, title: str, path: Path, fontsize: float | None = None) -> Path:
    """Title, tighten, write (110 dpi) and close `fig`; returns `path`."""
    import matplotlib.pyplot as plt

    fig.suptitle(title, fontsize=fontsize)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
