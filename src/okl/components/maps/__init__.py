"""Feature maps, one module each: the compiled functions of a map of the component table (okl.components)."""
