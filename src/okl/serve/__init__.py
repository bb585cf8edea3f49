"""``okl serve``: online learning as a service (a model per key, delayed labels, a write-ahead log).

- :class:`App` (:mod:`okl.serve.app`): the ASGI application (Starlette); ``okl serve`` runs it on uvicorn.
- :class:`Template` / :class:`Shard` (:mod:`okl.serve.shards`): how a key's model is made; the keys of one writer.
- :class:`Store` (:mod:`okl.serve.store`): the SQLite write-ahead log and the snapshots.
- :class:`Client` (:mod:`okl.serve.client`): predict, learn and events over HTTP, with retries that never learn twice.

The service's dependencies are the ``okl[serve]`` extra (Starlette, uvicorn, orjson); nothing is
imported until a name is used.
"""

from __future__ import annotations

_NAMES = {"App": "okl.serve.app", "Template": "okl.serve.shards", "Shard": "okl.serve.shards",
          "Store": "okl.serve.store", "Client": "okl.serve.client", "ServeError": "okl.serve.client"}


def __getattr__(name):
    if name in _NAMES:
        import importlib

        return getattr(importlib.import_module(_NAMES[name]), name)
    raise AttributeError(f"module 'okl.serve' has no attribute {name!r}")


__all__ = list(_NAMES)
