"""One module per resource, each holding its ``@capability`` handlers (``documents`` is a
package: its search, bulk edit and inspection are modules of their own). A resource uses the
framework and the services; where two resources need the same work, a service holds it
(``tests/test_layers.py`` keeps resources from importing each other)."""
