"""Tools for the content pipeline spec (pipeline.yaml)."""
