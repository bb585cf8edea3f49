"""Load ``../shared/checks/riverbest.py`` (its streams, River's models, the predict-then-learn loop
and the stored reference) as a module for the scripts here that measure against it."""
import importlib.util


def load_riverbest(path: str):
    spec = importlib.util.spec_from_file_location("riverbest", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
