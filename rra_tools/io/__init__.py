"""Reading input safely: the document readers and locators (:mod:`.read`), the one artifact type,
the published schemas, safe paths and links, digests, canonical JSON and atomic writes."""
