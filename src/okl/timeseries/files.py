"""Model files of :class:`okl.timeseries.Forecaster`: one zip, no pickle (:func:`save_forecaster`,
:func:`load_forecaster`)."""

from __future__ import annotations

import math

import numpy as np

from okl.intervals import ConformalHead
from okl.timeseries.mixing import TemperedMix
from okl.timeseries.smoothing import SmoothingBank

#: the largest forecaster.json a file may hold (the series, the members' specs and losses: an
#: untrusted file cannot make load read more)
MAX_HEADER = 64 << 20

#: the file format's version (2: members scored on the forecasts they made, the views' log flag)
VERSION = 2


def save_forecaster(fc, path) -> None:
    """``fc`` as one zip (no pickle): ``forecaster.json`` (hyperparameters, the kept values, the
    mixture's losses, the interval heads) and one okl model file per live member, ``h<h>_m<j>.npz``;
    written beside ``path`` and renamed over it (a crash leaves the previous file whole)."""
    import json
    import os
    import tempfile
    import zipfile

    from okl._files import write_atomically

    meta = {"format": "okl-forecaster", "version": VERSION,
            "params": {"learner": fc.learner, "order": fc.order, "period": fc.period, "warmup": fc.warmup,
                       "burn": fc.burn, "keep": fc.keep, "drop": fc.drop, "discount": fc.discount,
                       "memory": fc.memory, "params": fc.params},
            "y": fc.y_, "x": [None if v is None else v.tolist() for v in fc.x_], "offset": fc.offset_, "n": fc.n_,
            "specs": [list(sp) for sp in fc.specs_], "loss": fc.loss_.tolist(), "alive": fc.alive_.tolist(),
            "heads": [hd.to_dict() for hd in fc.heads_], "rounds": fc.rounds_, "scale": list(fc.scale_),
            "rec_loss": fc.rec_loss_.tolist(), "weight": fc.weight_.tolist(), "rec_weight": fc.rec_weight_.tolist(), "paths": [[o, list(p)] for o, p in fc.paths_],
            "issued": [[o, list(p), [[u, [[a, v if math.isfinite(v) else None] for a, v in qs.items()]] for u, qs in q]]
                       for o, p, q in fc.issued_],
            "pending": [[[o, [v if math.isfinite(v) else None for v in p]] for o, p in d.items()] for d in fc.pending_],
            "mix": fc.mix_.to_dict(), "exog_keys": fc.exog_keys_,
            "bank": None if fc.bank_ is None else fc.bank_.to_dict(),
            "level_bank": None if fc.level_bank_ is None else fc.level_bank_.to_dict(),
            "bank_spec": None if fc.bank_spec_ is None else list(fc.bank_spec_), "positive": fc.positive_, "range": [fc.lo_, fc.hi_]}
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for h, models in enumerate(fc.models_):
            for j, m in enumerate(models):
                if m is not None:
                    name = f"h{h + 1}_m{j}.npz"
                    m.save(os.path.join(tmp, name))
                    files.append(name)

        def write(fh):
            with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as zf:
                zf.writestr("forecaster.json", json.dumps(meta))
                for name in files:
                    zf.write(os.path.join(tmp, name), name)

        write_atomically(path, write)


def _issued_entry(e) -> tuple:
    """(origin, forecasts, the heads' snapshots) of a file's "issued" entry (a file written before
    the snapshots were kept has none: those heads judge the interval by their state when scored)."""
    snapshots = [(float(u), {float(a): math.inf if v is None else float(v) for a, v in qs}) for u, qs in e[2]] \
        if len(e) > 2 else []
    return int(e[0]), [float(v) for v in e[1]], snapshots


def load_forecaster(path, cls):
    """The forecaster (an instance of ``cls``, :class:`okl.timeseries.Forecaster`) :func:`save_forecaster` wrote; a malformed file raises ValueError
    naming the file and the field (each member is checked by :meth:`okl.runtime.base.Learner.load`)."""
    import json
    import os
    import shutil
    import tempfile
    import zipfile

    from okl.runtime.base import Learner
    from okl.runtime.modelfile import check_header

    path = str(path)
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ValueError(f"{path}: not an okl forecaster file ({exc})") from None
    with zf:
        try:
            size = zf.getinfo("forecaster.json").file_size
            if size > MAX_HEADER:  # (zipfile stops reading at the declared size: memory is bounded)
                raise ValueError(f"forecaster.json of {size} bytes, at most {MAX_HEADER}")
            meta = json.loads(zf.read("forecaster.json"))
        except (KeyError, ValueError) as exc:
            raise ValueError(f"{path}: no readable forecaster.json ({exc})") from None
        check_header(meta, path, "an okl forecaster file", "okl-forecaster", "forecaster",
                     VERSION, version_key="version", error=ValueError,
                     hint=" (version 2 scores members on their forecasts: refit the series)")
        try:
            fc = cls(**meta["params"])
            fc.y_ = [float(v) for v in meta["y"]]
            fc.x_ = [None if v is None else np.array(v, dtype=float) for v in meta["x"]]
            fc.offset_, fc.n_, fc.rounds_ = int(meta["offset"]), int(meta["n"]), int(meta["rounds"])
            fc.specs_ = [(int(a), int(b), str(c), None if d is None else float(d), dict(e), bool(f))
                         for a, b, c, d, e, f in meta["specs"]]
            k = len(fc.specs_)
            fc.loss_ = np.array(meta["loss"], dtype=float).reshape(-1, k)
            fc.alive_ = np.array(meta["alive"], dtype=bool).reshape(-1, k)
            fc.heads_ = [ConformalHead.from_dict(d, f"{path}: head {i + 1}") for i, d in enumerate(meta["heads"])]
            fc.scale_ = (float(meta["scale"][0]), float(meta["scale"][1]), int(meta["scale"][2]))
            fc.positive_ = bool(meta["positive"])
            fc.lo_, fc.hi_ = (float(v) for v in meta["range"])
            fc.exog_keys_ = meta["exog_keys"]
            fc.rec_loss_ = np.array(meta["rec_loss"], dtype=float)
            fc.weight_ = np.array(meta["weight"], dtype=float).reshape(-1, k)
            fc.rec_weight_ = np.array(meta["rec_weight"], dtype=float)
            fc.paths_ = [(int(o), [float(v) for v in p]) for o, p in meta["paths"]]
            fc.issued_ = [_issued_entry(e) for e in meta["issued"]]
            if "mix" in meta:  # (a file written before the tempered mix: it starts afresh)
                fc.mix_ = TemperedMix.from_dict(meta["mix"], fc.discount, f"{path}: mix")
            fc.mix_.add_horizons(len(fc.loss_))
            if meta.get("bank") is not None:  # (a file written before the Holt-Winters candidates: none)
                fc.bank_ = SmoothingBank.from_dict(meta["bank"], fc.discount, f"{path}: bank")
            if meta.get("level_bank") is not None:  # (a file written before it: none)
                fc.level_bank_ = SmoothingBank.from_dict(meta["level_bank"], fc.discount, f"{path}: level bank")
            if meta.get("bank_spec") is not None:
                a, b, c = meta["bank_spec"]
                fc.bank_spec_ = (int(a), int(b), bool(c))
            fc.pending_ = [{int(o): np.array([math.nan if v is None else float(v) for v in p]).reshape(k)
                            for o, p in d} for d in meta["pending"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: forecaster.json: {exc}") from None
        if len(fc.y_) != len(fc.x_) or not fc.loss_.shape == fc.alive_.shape == fc.weight_.shape or not (
                len(fc.heads_) == len(fc.loss_) == len(fc.rec_loss_) == len(fc.rec_weight_) == len(fc.pending_)):
            raise ValueError(f"{path}: forecaster.json: values, losses and heads disagree in length")
        fc.models_ = []
        tmp = tempfile.mkdtemp()
        for h in range(len(fc.loss_)):
            row = []
            for j in range(k):
                if fc.alive_[h, j]:
                    name = f"h{h + 1}_m{j}.npz"
                    try:
                        data = zf.read(name)
                    except KeyError:
                        raise ValueError(f"{path}: member file {name} is missing") from None
                    member = os.path.join(tmp, name)
                    with open(member, "wb") as fh:
                        fh.write(data)
                    try:
                        row.append(Learner.load(member))
                    except Exception as exc:
                        raise ValueError(f"{path}: {name}: {exc}") from None
                else:
                    row.append(None)
            fc.models_.append(row)
        shutil.rmtree(tmp, ignore_errors=True)
    return fc


__all__ = ["VERSION", "load_forecaster", "save_forecaster"]
