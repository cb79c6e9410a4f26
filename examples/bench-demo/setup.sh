#!/bin/sh
# Make the upstream git repositories of the demo's raw condition, in repos/<name>/, from raw/<name>/.
#
# A repository cannot live inside this one, so each is built here, from the files of raw/, with a
# fixed author, committer, dates and message: the commit ids come out the same on every machine,
# and they are the ids the artifacts' manifests (code.upstream.commit) and the task set name.
# Run it in a copy of examples/bench-demo (the README does); it replaces repos/.
set -eu
cd "$(dirname "$0")"
rm -rf repos
for name in linfit nbayes montecarlo; do
    mkdir -p "repos/$name"
    cp -R "raw/$name/." "repos/$name/"
    (
        cd "repos/$name"
        export GIT_AUTHOR_NAME="Paper Authors" GIT_AUTHOR_EMAIL="authors@example.org"
        export GIT_COMMITTER_NAME="Paper Authors" GIT_COMMITTER_EMAIL="authors@example.org"
        export GIT_AUTHOR_DATE="2024-01-01T00:00:00Z" GIT_COMMITTER_DATE="2024-01-01T00:00:00Z"
        git init -q -b main .
        git -c core.autocrlf=false add -A
        git -c commit.gpgsign=false commit -q -m "code as published with the paper"
        echo "$name $(git rev-parse HEAD)"
    )
done
