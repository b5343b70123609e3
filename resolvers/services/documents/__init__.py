"""What several document capabilities share: the API views of a stored document
(``document_views``), edit entries (``document_edits``), a workspace's preferences
(``preferences``), and ranked search's per-workspace indexes (``search_indexes``, with the
fields filters read, ``filter_columns``).
"""
