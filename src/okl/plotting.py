"""matplotlib, okl's optional dependency for figures (``pip install 'okl[plot]'``).

``import okl`` and every command that draws nothing work without it; whatever draws a figure
(``--plot``, ``okl reproduce``'s PNGs, ``okl report``) takes pyplot from :func:`pyplot`, which says
what to install when matplotlib is missing. The backend is Agg: files only, no display needed.
"""

from __future__ import annotations

#: the message of a figure asked for without matplotlib
MISSING = ("drawing a figure needs matplotlib, an optional part of okl: pip install 'okl[plot]' "
           "(or pip install matplotlib)")


class PlotDependencyError(ImportError):
    """A figure was asked for and matplotlib is not installed; the message says what to install."""


def matplotlib():
    """The matplotlib module with the Agg backend selected, or :class:`PlotDependencyError`."""
    try:
        import matplotlib as mpl
    except ImportError:
        raise PlotDependencyError(MISSING) from None
    mpl.use("Agg")
    return mpl


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend, or :class:`PlotDependencyError` saying what to install."""
    matplotlib()
    import matplotlib.pyplot as plt

    return plt


#: line styles crossed with the colour cycle (:func:`curve_style`)
STYLES = ("-", "--", "-.", ":")


def curve_style(i: int, colours: list[str]) -> dict:
    """Colour and line style of curve ``i`` among any number: the colour cycle (``colours``, the
    axes' prop cycle) with the line style changing at each of its turns and shifted by one
    within it, so neighbouring curves differ in both and no two of len(colours) x len(STYLES)
    curves look alike (a 10-colour cycle drew 17 curves of kaf-lorenz with 7 colours twice)."""
    return {"color": colours[i % len(colours)], "linestyle": STYLES[(i // len(colours) + i) % len(STYLES)]}
