"""The protocol's module :mod:`okl.runtime.state` under the name it had before okl.runtime (scripts
import ``ModelFileError`` from ``okl.learners.state``): its public names, the same objects."""

from okl.runtime.state import (MAX_CLASSES, MAX_DIM, MAX_HEADER_BYTES, MAX_ROUNDS, MODEL_FORMAT,  # noqa: F401
                               MODEL_FORMAT_VERSION, Arr, ModelFileError, Num, Opaque, Seq, StateError, StateSpec,
                               encode_param)

__all__ = ["MAX_CLASSES", "MAX_DIM", "MAX_HEADER_BYTES", "MAX_ROUNDS", "MODEL_FORMAT", "MODEL_FORMAT_VERSION", "Arr",
           "ModelFileError", "Num", "Opaque", "Seq", "StateError", "StateSpec", "encode_param"]
