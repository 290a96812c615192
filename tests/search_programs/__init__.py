"""Search programs in other languages for the goldeneval.command tests, and their references."""
