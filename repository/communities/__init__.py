"""Communities (curated collections users own) and the inclusion requests records send them."""
