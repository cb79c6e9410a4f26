"""Detection of what a raw repository already says (``rra init RAW_REPO``): one module per
kind of source, each returning what it found with the file and line it came from."""
