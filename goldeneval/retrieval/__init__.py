"""Retrieval runs (ADR-072): golden sets, retrievers, asking, scoring, details, report."""
