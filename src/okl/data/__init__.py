"""Datasets, readers and stream transforms."""

from okl.data.readers import DataFormatError, read_csv, read_svmlight
from okl.data.registry import (REGISTRY, DatasetInfo, data_dirs, dataset_info, datasets, find_files,
                               load_dataset, minmax_scale, permutation)

__all__ = ["DataFormatError", "read_csv", "read_svmlight", "REGISTRY", "DatasetInfo", "data_dirs",
           "dataset_info", "datasets", "find_files", "load_dataset", "minmax_scale", "permutation"]
