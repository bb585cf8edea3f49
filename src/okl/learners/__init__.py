"""Online learners, one module per algorithm family; each registers itself by its CLI name.

The protocol, state, model files, registry, per-event path and K outputs they share are in
:mod:`okl.runtime`; the compiled per-event plans and ``auto``'s engine, which run several
families' arithmetic, in :mod:`okl.engine`, and that arithmetic, one module per feature map and
per step, in :mod:`okl.components` (all below the families)."""

from okl.runtime.base import Learner, ModelFileError, NonFiniteError, Trace, learner_class, learners, make, register
from okl.learners.kogd import KOGD
from okl.learners.fogd import FOGD
from okl.learners.nogd import NOGD
from okl.learners.linear import LinearOGD
from okl.learners.skegd import SkeGD
from okl.learners.budget import BOGD, BPAS, RBP, Forgetron, Projectron, ProjectronPlusPlus
from okl.learners.kons import BKons, ConKons, ProsNKons
from okl.learners.forks import FORKS
from okl.learners.window import KernelWindow
from okl.learners.klms import KLMS
from okl.learners.qklms import QKLMS
from okl.learners.knlms import KAP, KNLMS
from okl.learners.krls import FBKRLS, KRLS, SWKRLS
from okl.learners.krlst import KRLST
from okl.learners.exkrls import EXKRLS
from okl.learners.bsgd import BSGD
from okl.learners.raker import AdaRaker, Raker
from okl.runtime.multiclass import MultiClass

__all__ = ["Learner", "ModelFileError", "NonFiniteError", "Trace", "learner_class", "learners", "make", "register",
           "KOGD", "FOGD", "NOGD", "LinearOGD", "SkeGD",
           "RBP", "Forgetron", "Projectron", "ProjectronPlusPlus", "BPAS", "BOGD",
           "ProsNKons", "ConKons", "BKons", "FORKS", "KernelWindow", "KLMS", "QKLMS", "KNLMS", "KAP", "KRLS",
           "SWKRLS", "FBKRLS", "KRLST", "EXKRLS", "BSGD", "Raker", "AdaRaker",
           "MultiClass"]
