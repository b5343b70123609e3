"""Patch the vendored explorer plugin (graphiql-explorer inside @graphiql/plugin-explorer 1.0.2)
so that its query builder shows a list argument instead of failing on it.

graphiql-explorer renders an argument's value only as a scalar, an enum or an object: a list
(``orderBy: [{…}]``, ``or: [{…}]``, ``groupBy: [MONTH, CATEGORY]``, ``in: ["Fuel"]``) logged
"arg mismatch between arg and selection" to the console for every list in the query, each time
the panel drew (4-8 errors on one nested filter), and scalar lists showed as empty inputs. The
patch draws a list as its GraphQL text, read-only (it is edited in the editor). Run by
scripts/vendor-graphiql.sh after copying; it fails when the code it patches is not found.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The start of AbstractArgView.render's value branches, as the 1.0.2 bundle spells it.
BEFORE = (
    'if(l.kind==="Variable")r=a.createElement("span",{style:{color:f.colors.variable}},"$",'
    "l.name.value);else if((0,v.isScalarType)(u))"
)
AFTER = (
    'if(l.kind==="Variable")r=a.createElement("span",{style:{color:f.colors.variable}},"$",'
    'l.name.value);else if(l.kind==="ListValue")r=a.createElement("span",{style:{color:'
    'f.colors.string2},title:"A list: edit it in the query editor"},(0,v.print)(l));'
    "else if((0,v.isScalarType)(u))"
)


def patch(path: Path) -> None:
    text = path.read_text()
    if AFTER in text:
        return
    if text.count(BEFORE) != 1:
        sys.exit(f"{path}: the code to patch was not found once; check the plugin's version")
    path.write_text(text.replace(BEFORE, AFTER))


if __name__ == "__main__":
    patch(Path(sys.argv[1]))
