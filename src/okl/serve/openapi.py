"""The OpenAPI 3.1 description of the service's versioned JSON API (served at ``/openapi.json``)."""

from __future__ import annotations

from okl._version import __version__

_ROW = {"oneOf": [{"type": "array", "items": {"type": "number"}, "minItems": 1},
                  {"type": "object", "additionalProperties": {"type": ["number", "string", "boolean", "null"]}}],
        "description": "features: a list of numbers (the key's width), or named features as okl's River adapter takes them"}
_KEY = {"type": "string", "maxLength": 256, "description": "the model's key (absent: the global model)"}
_ID = {"type": "string", "maxLength": 256, "description": "event id: a predict keeps its features for the label; "
                                                           "a learn with an id is learned at most once"}
_PREDICT = {"type": "object", "additionalProperties": False, "required": ["x"],
            "properties": {"key": _KEY, "id": _ID, "x": _ROW}}
_LEARN = {"type": "object", "additionalProperties": False, "required": ["y"],
          "properties": {"key": _KEY, "id": _ID, "x": _ROW,
                         "y": {"type": ["number", "boolean"], "description": "label -1/+1 (0/1, false/true) or target"}}}
_PREDICTION = {"type": "object", "properties": {
    "decision": {"type": "number"}, "prediction": {"type": "number"}, "new_key": {"type": "boolean"},
    "proba": {"type": "object", "description": "classification: P(-1), P(+1)"}}}
_LEARNED = {"type": "object", "properties": {"learned": {"type": "boolean"}, "duplicate": {"type": "boolean"},
                                             "id": {"type": "string"}, "new_key": {"type": "boolean"},
                                             "reason": {"type": "string"}}}
_ERROR = {"type": "object", "properties": {"error": {"type": "string"}, "field": {"type": ["string", "null"]},
                                           "index": {"type": ["integer", "null"]}}}


def _errors(*codes):
    text = {400: "malformed JSON", 401: "missing or wrong token", 404: "no such key", 413: "body too large",
            422: "wrong shape, non-finite number, unknown field or width (field and index named)",
            503: "the log could not be written: nothing acknowledged"}
    return {str(c): {"description": text[c], "content": {"application/json": {"schema": _ERROR}}} for c in codes}


def _post(summary, req, res, media="application/json"):
    return {"post": {"summary": summary, "requestBody": {"required": True, "content": {media: {"schema": req}}},
                     "responses": {"200": {"description": "done", "content": {media: {"schema": res}}},
                                   **_errors(400, 401, 413, 422, 503)}}}


def schema() -> dict:
    event = {"oneOf": [{**_PREDICT, "properties": {**_PREDICT["properties"], "op": {"const": "predict"}}},
                       {**_LEARN, "properties": {**_LEARN["properties"], "op": {"const": "learn"}}}]}
    return {
        "openapi": "3.1.0",
        "info": {"title": "okl serve", "version": "v1", "x-okl-version": __version__,
                 "description": "Online kernel learning as a service: a model per key, delayed labels, a write-ahead log."},
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}],
        "paths": {
            "/v1/predict": _post("decision, label and probabilities of one row", _PREDICT, _PREDICTION),
            "/v1/learn": _post("learn one label (joined to a kept prediction by id) or one row", _LEARN, _LEARNED),
            "/v1/events": _post("NDJSON of predict and learn events, answered in order (one line each)",
                                event, {"oneOf": [_PREDICTION, _LEARNED]}, "application/x-ndjson"),
            "/v1/keys/{key}": {"get": {"summary": "a key's events, metric and state size",
                                       "responses": {"200": {"description": "the key"}, **_errors(401, 404)}},
                               "delete": {"summary": "forget a key (its ids stay learned)",
                                          "responses": {"200": {"description": "deleted"}, **_errors(401, 404)}}},
            "/v1/keys/{key}/model": {"get": {"summary": "the key's okl model file (.npz, no pickle)",
                                             "responses": {"200": {"description": "model file"}, **_errors(401, 404)}}},
            "/v1/stats": {"get": {"summary": "the dashboard's figures (JSON)", "responses": {"200": {"description": "stats"}}}},
            "/healthz": {"get": {"summary": "liveness (no token)", "security": [],
                                 "responses": {"200": {"description": "ok"}}}},
            "/metrics": {"get": {"summary": "Prometheus text: events, latencies, keys in memory, prequential metric",
                                 "responses": {"200": {"description": "metrics"}}}},
            "/": {"get": {"summary": "the dashboard page (no token; it asks /v1/stats with #token=...)", "security": [],
                          "responses": {"200": {"description": "HTML"}}}},
        },
    }
