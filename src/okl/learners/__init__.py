"""Online learners, one module per algorithm family; each registers itself by its CLI name."""

from okl.learners.base import Learner, ModelFileError, Trace, learner_class, learners, make, register
from okl.learners.kogd import KOGD
from okl.learners.fogd import FOGD
from okl.learners.nogd import NOGD
from okl.learners.linear import LinearOGD

__all__ = ["Learner", "ModelFileError", "Trace", "learner_class", "learners", "make", "register",
           "KOGD", "FOGD", "NOGD", "LinearOGD"]
