"""Scale-out: the service's shards as Ray actors (``okl serve --engine ray``, the ``okl[ray]`` extra).

Each shard is a named actor (``okl-serve/<store digest>/<shard name>`` in namespace ``okl``) that
owns a :class:`okl.serve.shards.Shard` on the store directory (shared storage when the cluster
has more than one machine): its keys' models, its SQLite log and snapshots. Actors are created
with ``max_restarts=-1`` and ``max_task_retries=-1``: an actor that dies (killed, its node lost)
is restarted by Ray, its constructor reopens the store (snapshots + the log replayed per key at
its next event), and the call that was in flight is sent again. A learn with an id is then
learned at most once (the id is in the log before the first attempt was acknowledged); a learn
without an id is learned twice if the actor died after its commit and before its answer, so give
learns ids (``okl.serve.Client`` does).

A request is two rounds over the shards it touches: every shard checks its events (nothing
applied; a refusal names the event), then every shard applies and commits its events and
answers; the app puts the answers back in request order. Cost: two actor calls per touched shard
per request (about 0.5-1 ms each on one machine) on top of the shard's work.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time

from okl.serve.inputs import EventError
from okl.serve.shards import Shard, Template


def _import_ray():
    try:
        import ray
    except ImportError as exc:
        raise ValueError(f"--engine ray needs Ray: pip install 'okl[ray]' ({exc})") from None
    return ray


class ShardActor:
    """The body of one shard actor (wrapped by ``ray.remote`` in :class:`RayShards`)."""

    def __init__(self, settings: dict, root: str, name: str, fsync: bool, max_memory: int, snapshot_every: int,
                 id_ttl: float):
        settings = dict(settings)
        settings["warm_start"] = "global" if settings.get("warm_start") else None
        template = Template(**settings)
        template.warm_up()
        self.shard = Shard(template, root, name, fsync, max_memory, snapshot_every, id_ttl)

    def check(self, events: list):
        try:
            self.shard.check(events, {})
        except EventError as exc:
            return exc.payload()
        return None

    def run(self, events: list, now: float):
        return self.shard.run(events, now)

    def call(self, method: str, *args):
        return getattr(self.shard, method)(*args)

    def pid(self) -> int:
        return os.getpid()


class RemoteShard:
    """The app's view of one shard actor: the Shard methods the app's other endpoints call."""

    def __init__(self, ray, actor):
        self.ray, self.actor = ray, actor

    def _get(self, method, *args):
        return self.ray.get(self.actor.call.remote(method, *args))

    def info(self, key):
        return self._get("info", key)

    def model_bytes(self, key):
        return self._get("model_bytes", key)

    def delete(self, key):
        return self._get("delete", key)

    def counts(self):
        return self._get("counts")

    def metric_name(self):
        return self._get("metric_name")

    def expire(self, now):
        return self._get("expire", now)

    def flush(self):
        return self._get("flush")  # (every --snapshot-seconds and at a clean stop)

    def close(self):
        return None  # the actor keeps its store open until it ends with the cluster or is killed


class RayShards:
    """Named, restartable shard actors on the Ray cluster this process is connected to (a local
    one is started when none is)."""

    def __init__(self, template: Template, store: str, names: list, fsync: bool, max_memory: int,
                 snapshot_every: int, id_ttl: float):
        ray = _import_ray()
        if not ray.is_initialized():
            ray.init(namespace="okl", include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
        self.ray = ray
        root = os.path.abspath(store)
        digest = hashlib.sha1(root.encode()).hexdigest()[:12]
        cls = ray.remote(max_restarts=-1, max_task_retries=-1, num_cpus=0)(ShardActor)
        self.actors = [cls.options(name=f"okl-serve/{digest}/{name}", namespace="okl", get_if_exists=True).remote(
            template.settings(), root, name, fsync, max_memory, snapshot_every, id_ttl) for name in names]
        self.proxies = [RemoteShard(ray, a) for a in self.actors]
        ray.get([a.pid.remote() for a in self.actors])  # every actor up (its store opened) before serving

    def shard_index(self, key: str) -> int:
        import zlib

        return zlib.crc32(key.encode("utf-8")) % len(self.actors)

    async def run(self, checked: list) -> list:
        parts: dict = {}
        for p, ev in enumerate(checked):
            parts.setdefault(self.shard_index(ev[1][1]), []).append(p)
        batches = {i: [checked[p] for p in ps] for i, ps in parts.items()}
        refusals = await asyncio.gather(*(self.actors[i].check.remote(b) for i, b in batches.items()))
        bad = [r for r in refusals if r is not None]
        if bad:
            raise EventError.from_payload(min(bad, key=lambda r: r["index"] if r["index"] is not None else -1))
        now = time.time()
        answers = await asyncio.gather(*(self.actors[i].run.remote(b, now) for i, b in batches.items()))
        out: list = [None] * len(checked)
        for (i, ps), ans in zip(parts.items(), answers):
            if isinstance(ans, dict):  # refused on a second look (a restarted actor): nothing of it applied
                raise EventError.from_payload(ans)
            for p, r in zip(ps, ans):
                out[p] = r
        return out
