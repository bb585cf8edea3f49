"""Datasets, readers and stream transforms."""

from okl.data.readers import DataFormatError, read_csv, read_svmlight
from okl.data.registry import (FILE_SOURCES, REGISTRY, DatasetInfo, FileSource, UserData, data_dirs, dataset_info,
                               datasets, find_files, load_dataset, load_file, minmax_scale, permutation)
from okl.data.fetch import FetchError, fetch_dataset

__all__ = ["DataFormatError", "read_csv", "read_svmlight", "REGISTRY", "DatasetInfo", "data_dirs",
           "dataset_info", "datasets", "find_files", "load_dataset", "minmax_scale", "permutation", "FILE_SOURCES",
           "FileSource", "UserData", "load_file", "FetchError", "fetch_dataset"]
