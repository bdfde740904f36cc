"""Files: bytes on disk, buckets of object versions, downloads (ranges, conditional requests), thumbnails, digests."""
