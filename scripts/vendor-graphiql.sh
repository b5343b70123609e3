#!/usr/bin/env bash
# Re-vendor the GraphQL explorer's browser files into app/graphql/graphiql: the built files the
# page loads (app/graphql/explorer.py lists them) and each package's licence, laid out as
# <package>@<version>/<path>. Needs npm; run from the repository root. After a version change,
# update the paths in app/graphql/explorer.py and run tests/graphql/test_explorer_page.py.
set -euo pipefail

REACT=18.2.0
GRAPHIQL=3.8.3
EXPLORER=1.0.2

root="$(pwd)"
target="$root/app/graphql/graphiql"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund --ignore-scripts --loglevel=error \
  "react@$REACT" "react-dom@$REACT" "graphiql@$GRAPHIQL" "@graphiql/plugin-explorer@$EXPLORER"

copy() {  # copy <package> <version> <path>...
  local package="$1" version="$2"
  shift 2
  for path in "$@"; do
    mkdir -p "$(dirname "$target/$package@$version/$path")"
    cp "node_modules/$package/$path" "$target/$package@$version/$path"
  done
}

copy react "$REACT" umd/react.production.min.js LICENSE
copy react-dom "$REACT" umd/react-dom.production.min.js LICENSE
copy graphiql "$GRAPHIQL" graphiql.min.js graphiql.min.css LICENSE
copy @graphiql/plugin-explorer "$EXPLORER" dist/index.umd.js dist/style.css
# The plugin's package carries no licence file: it is MIT, from the same repository as graphiql
# (whose LICENSE is that repository's), and its bundle includes graphiql-explorer (MIT, its own).
plugin="$target/@graphiql/plugin-explorer@$EXPLORER"
cp node_modules/graphiql/LICENSE "$plugin/LICENSE"
cp "$(find node_modules -path '*/graphiql-explorer/LICENSE' | head -n 1)" \
  "$plugin/LICENSE.graphiql-explorer"
# One patch: the query builder draws list arguments instead of logging errors on them.
python3 "$root/scripts/patch-graphiql-explorer.py" "$plugin/dist/index.umd.js"
echo "vendored into $target"
