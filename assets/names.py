"""Names every asset module shares: groups, the store's pool, the IO manager, the checks."""

GROUP = "goldeneval"
STORE_POOL = "goldeneval_store"
"""Every step that opens the result store takes a slot of this pool (limit 1)."""
TABLES_IO_MANAGER = "tables_io_manager"
RUN_COMPLETE = "run_complete"
NO_REGRESSION = "no_regression"

__all__ = ["GROUP", "NO_REGRESSION", "RUN_COMPLETE", "STORE_POOL", "TABLES_IO_MANAGER"]
