"""Depositions: the state machine (actions), their representation, the caller's list and its query, and PIDs."""
