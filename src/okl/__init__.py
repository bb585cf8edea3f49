"""okl: online kernel learning on data streams.

>>> import okl
>>> X, y = okl.load_dataset("german")
>>> X.shape, sorted(set(y.tolist()))
((1000, 24), [-1.0, 1.0])
>>> m = okl.make("nogd", budget=100, kernel=okl.RBF(sigma=8))
>>> round(m.run(X, y).mistake_rate, 1) > 0
True
"""

from okl._version import __version__  # noqa: E402

from okl.kernels import RBF, Laplacian, Linear, Polynomial  # noqa: E402
from okl.losses import get_loss  # noqa: E402
from okl.learners import *  # noqa: E402,F401,F403
from okl.learners import Learner, MultiClass, Trace, learners, make  # noqa: E402
from okl.ensemble import Auto  # noqa: E402,F401  (registers auto)
from okl.data import load_dataset, datasets, fetch_dataset, load_file  # noqa: E402
# the feature-evolvable learners join the one registry (okl.learners(kind="evolvable"))
import okl.evolvable  # noqa: E402,F401


def compile(processes=None, progress=True):  # noqa: A001
    """Compile okl's code for this machine now, into its cache (what installing okl does; see
    :func:`okl.precompile.compile`): for a read-only install, an image built on another CPU, or
    after an upgrade. Returns the report of :func:`okl.precompile.check`."""
    from okl.precompile import compile as compile_all

    return compile_all(processes=processes, progress=progress)

__all__ = ["__version__", "RBF", "Laplacian", "Linear", "Polynomial", "get_loss", "Learner", "MultiClass", "Trace",
           "learners", "make", "load_dataset", "datasets", "fetch_dataset", "load_file", "compile"]
