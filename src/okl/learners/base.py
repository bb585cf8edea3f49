"""The protocol's module :mod:`okl.runtime.base` under the name it had before okl.runtime (scripts
import ``Learner`` and ``ModelFileError`` from ``okl.learners.base``): its public names, the same objects."""

from okl.runtime.base import *  # noqa: F401,F403
from okl.runtime.base import __all__  # noqa: F401
