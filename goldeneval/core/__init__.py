"""What every run kind shares: errors, provenance, privacy, comparison states, the gate."""
