#!/usr/bin/env bash
#===- examples/gpt/data/make-text.sh - English text from Debian man pages ===#
#
# Writes man.txt: the manual pages of a fixed list of coreutils, grep, sed,
# tar, findutils, diffutils, patch and make commands, rendered with groff and
# col -b, one document per page (its non-empty lines, leading blanks
# dropped, ASCII only) and a blank line between documents: the separator
# `PROGRAM train --text` reads as end-of-text. The committed man.txt came
# from Debian 12's pages; rerun to regenerate (the text depends on the
# installed versions).
#
#   bash examples/gpt/data/make-text.sh > examples/gpt/data/man.txt
#
#===------------------------------------------------------------------------===#
set -euo pipefail
pages="ls cp mv rm cat sort uniq grep sed tar gzip find xargs chmod chown ln
head tail wc cut tr date du df touch mkdir env tee split join paste comm diff
patch make"
first=1
for page in $pages; do
  file=/usr/share/man/man1/$page.1.gz
  [ -f "$file" ] || { echo "make-text.sh: no $file" >&2; exit 1; }
  [ $first = 1 ] || echo
  first=0
  zcat "$file" | groff -Tutf8 -man -rHY=0 -rLL=1000n 2>/dev/null | col -bx |
    LC_ALL=C tr -cd '\11\12\40-\176' |
    sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e '/^$/d' |
    # the running header and footer lines (NAME(1) ... NAME(1), version)
    grep -v -E '^[A-Z0-9_.-]+\([0-9]\)' | grep -v -E '^(GNU|[A-Za-z]+ [0-9.]+) .*[0-9]{4}' || true
done
