"""Files: bytes on disk, buckets of object versions and whose each bucket is (owners), downloads (ranges,
conditional requests), thumbnails, digests."""
