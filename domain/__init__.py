"""Value types that several layers share: the wire contract (``schema``), storage
(``persistence``) and the engines each use them, and none of those may import another.

Nothing here imports the rest of fincap: a type lives here when two of those layers need it
(document enums, the where clause's typed model, what an upload may be).
"""
