"""SEA's own API under ``/v1``: personas, pulses, the approvals inbox."""
