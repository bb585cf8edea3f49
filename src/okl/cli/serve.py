"""``okl serve``: online learning as a service over HTTP (the library is :mod:`okl.serve`).

``okl serve --learner fogd --task classification --store DIR`` serves a model per key on
127.0.0.1:8000; another address needs a token (``--token`` or ``OKL_SERVE_TOKEN``). Settings may
come from a TOML file (``--config FILE``: the long option names as keys, ``param`` a table);
options given on the command line win.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import re

from okl.cli._common import parse_params

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?i?B?)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1e3, "kb": 1e3, "kib": 2 ** 10, "m": 1e6, "mb": 1e6, "mib": 2 ** 20,
          "g": 1e9, "gb": 1e9, "gib": 2 ** 30, "t": 1e12, "tb": 1e12, "tib": 2 ** 40}
DEFAULTS = {"learner": "auto", "task": "classification", "store": "okl-serve-store", "host": "127.0.0.1",
            "port": 8000, "max_memory": "1GiB", "max_body": "16MiB", "shards": 1, "snapshot_every": 10000,
            "snapshot_seconds": 300.0, "id_ttl": 86400.0, "warm_start": "none", "fsync": False, "token": None,
            "features": None, "categorical": None}


def parse_size(text, option: str) -> int:
    """Bytes of ``1536MiB``, ``2GB``, ``4096`` (binary and decimal units)."""
    m = _SIZE.match(str(text))
    unit = (m.group(2) or "").lower() if m else None
    if m is None or unit not in _UNITS:
        raise ValueError(f"{option}: expected a size such as 512MiB or 2GiB, got {text!r}")
    return int(float(m.group(1)) * _UNITS[unit])


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "serve", help="serve predictions and learning over HTTP: a model per key, delayed labels, a write-ahead log",
        description="Serve a model per key over a JSON/NDJSON HTTP API (POST /v1/predict, /v1/learn, "
                    "/v1/events; GET /v1/keys/KEY, /metrics, / a dashboard, /openapi.json). Every learn is "
                    "in the store's write-ahead log before it is acknowledged; a restart on the same --store "
                    "continues exactly. Binds 127.0.0.1 unless --host is given with a token.")
    p.add_argument("--config", help="TOML file of settings (long option names as keys, [param] a table)")
    p.add_argument("--learner", help=f"registered learner of every key (default {DEFAULTS['learner']})")
    p.add_argument("--task", choices=["classification", "regression"], help="default classification")
    p.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="hyperparameter of the learner, value parsed as JSON (repeatable)")
    p.add_argument("--store", help="directory of the write-ahead log and snapshots (default ./okl-serve-store)")
    p.add_argument("--host", help="address to bind (default 127.0.0.1; any other needs a token)")
    p.add_argument("--port", type=int, help="port (default 8000)")
    p.add_argument("--token", help="bearer token every request but /healthz must carry (default $OKL_SERVE_TOKEN)")
    p.add_argument("--max-memory", help="memory for keys' models before idle keys are evicted to the store "
                                        "(default 1GiB)")
    p.add_argument("--max-body", help="largest request body; larger ones are answered 413 (default 16MiB)")
    p.add_argument("--shards", type=int, help="shard workers; a key's shard is CRC-32(key) mod N (default 1)")
    p.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="local: shards in this process; ray: named, restartable Ray actors (okl[ray])")
    p.add_argument("--snapshot-every", type=int, help="learns of a key between its snapshots (default 10000)")
    p.add_argument("--snapshot-seconds", type=float,
                   help="seconds between snapshots of the keys more than 256 learns behind theirs (default 300)")
    p.add_argument("--id-ttl", type=float, help="seconds a predict's features wait for their label (default 86400)")
    p.add_argument("--warm-start", choices=["none", "global"], help="a new key starts from the global model")
    p.add_argument("--features", help="comma-separated feature names of dict inputs, in column order")
    p.add_argument("--categorical", help="comma-separated feature names whose values are category levels")
    p.add_argument("--fsync", action="store_true", default=None,
                   help="fsync every group commit: nothing acknowledged is lost even if the machine is")
    p.set_defaults(func=main_serve)
    return p


def _settings(args) -> dict:
    conf = dict(DEFAULTS)
    params = {}
    if args.config:
        import tomllib

        with open(args.config, "rb") as fh:
            try:
                data = tomllib.load(fh)
            except tomllib.TOMLDecodeError as exc:
                raise ValueError(f"{args.config}: {exc}") from None
        params.update(data.pop("param", {}))
        for k, v in data.items():
            name = k.replace("-", "_")
            if name not in DEFAULTS:
                raise ValueError(f"{args.config}: unknown setting {k!r} (known: {', '.join(sorted(DEFAULTS))}, param)")
            conf[name] = v
    for name in DEFAULTS:
        v = getattr(args, name, None)
        if v is not None:
            conf[name] = v
    params.update(parse_params(args.param))
    conf["params"] = params
    if conf["token"] is None:
        conf["token"] = os.environ.get("OKL_SERVE_TOKEN") or None
    for name in ("features", "categorical"):
        if isinstance(conf[name], str):
            conf[name] = [s.strip() for s in conf[name].split(",") if s.strip()]
    return conf


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def main_serve(args) -> int:
    conf = _settings(args)
    if not loopback(conf["host"]) and not conf["token"]:
        raise ValueError(f"--host {conf['host']} is reachable from other machines: set a token (--token or "
                         "OKL_SERVE_TOKEN), or bind 127.0.0.1")
    if not 0 <= int(conf["port"]) <= 65535:
        raise ValueError(f"--port must be 0..65535, got {conf['port']}")
    try:
        import uvicorn

        from okl.serve.app import App
        from okl.serve.shards import Template
    except ImportError as exc:
        raise ValueError(f"okl serve needs the serve extra: pip install 'okl[serve]' ({exc})") from None
    template = Template(conf["learner"], conf["task"], conf["params"], conf["features"], conf["categorical"],
                        conf["warm_start"])
    app = App(template, conf["store"], token=conf["token"], max_body=parse_size(conf["max_body"], "--max-body"),
              max_memory=parse_size(conf["max_memory"], "--max-memory"), shards=int(conf["shards"]),
              fsync=bool(conf["fsync"]), snapshot_every=int(conf["snapshot_every"]), id_ttl=float(conf["id_ttl"]),
              engine=args.engine, snapshot_seconds=float(conf["snapshot_seconds"]))
    # no Server and Date headers: two header lines less for every client to parse on every answer
    uvicorn.run(app, host=conf["host"], port=int(conf["port"]), log_level="warning", access_log=False,
                timeout_graceful_shutdown=10, server_header=False, date_header=False)
    return 0
