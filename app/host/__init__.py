"""The host: what runs the service as a process, apart from the faces it serves.

    main            ``create_app``: builds the services once, mounts the faces
    services        ``build_services``: the one services factory (app, workers, tests)
    config          ``Settings``: one typed field per environment variable
    config_reference  the configuration page's table, generated from ``Settings``
    database        ``open_store``: ``MONGODB_URI``, else the embedded server
    serving         the server's start and stop (the live streams end first)
    processing      the analysis executor and the worker pool of a process
    workers         ``WorkerPool``: claims, runs and completes durable jobs
    analysis_child  set-up of each analysis process (memory limit, dies with its parent)
    secret_key      where the server secret comes from
    observability   JSON logs, request ids
    metrics         ``/metrics`` (Prometheus)
    operations      the routes operators read: ``/healthz``, ``/readyz``, ``/metrics``
    heap            the serving process's start-up heap, kept out of the full GC passes

The CLI's client commands read ``config`` (``ClientSettings``) and nothing else of it: this
package's ``__init__`` imports nothing.
"""
