"""The Dagster code location: definitions, jobs, the nightly schedule and the sensors."""
