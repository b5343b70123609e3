"""A document's way in and through: the intake (a source's item, its documents and jobs,
whole or not at all), inbound email, the pipeline and its steps and contract, the analyzer that
runs extraction off the event loop, thumbnails, reprocessing, recovery at start-up, and the
free-space floor intake is refused under (``disk_space``).
"""
