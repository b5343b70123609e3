"""Live document events: the process's hub (``hub``: publish, subscribe, the fan-out and the
poller for other processes' events), the subscribers' filters (``event_filters``), and the
authorization a live stream or socket keeps checking (``stream_access``).
"""
