"""Steps, one module each: the compiled functions of a step of the component table (okl.components)."""
