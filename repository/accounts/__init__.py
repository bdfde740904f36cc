"""Users and personal access tokens (random, shown once, stored hashed, compared in constant time)."""
