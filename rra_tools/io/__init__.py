"""Reading manifests with source positions, safe paths inside an artifact, and digests."""
